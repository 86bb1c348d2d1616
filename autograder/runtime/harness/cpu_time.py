"""The time limit per test counts the learner's computing, not a busy machine (H48).

The limit was wall-clock time: a correct but slow learner graded beside one whose code started
busy processes (or on a machine loaded by anything else) ran out of time and lost points for
work it had not been given the CPU to do. Now a call may go on while the CPU time its worker
process tree has used stays within the budget, up to WALL_FACTOR times the budget in wall time
(a call that sleeps, waits for input or is blocked computes nothing, and must still end).

How a request is timed (learner_session.LearnerSession):

* the worker reports its own CPU time (user + system, all its threads) in every answer and in
  its ready message: the CPU time it had when the next request starts;
* the harness waits for the answer as long as the budget left; when that passes without an
  answer, it reads the CPU time of the worker's process tree from /proc (`tree_seconds`) and
  waits again for what is left of the budget by that count, until the budget is used or the
  wall limit passes.

Without /proc (another platform) the wall clock is the limit, as before.
"""

from __future__ import annotations

import os
from pathlib import Path

#: A call may last at most this many times its CPU budget in wall time.
WALL_FACTOR = 3.0
#: Less CPU than this fraction of the budget left: the budget counts as spent (the ticks of
#: /proc are 10 ms; a wait of a few ms more would only wake the harness again).
SLACK = 0.01
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = Path("/proc")


def tree_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` and its descendants (their threads
    included; children it already waited for, too); None when /proc cannot tell."""
    total, stack, seen = 0.0, [pid], set()
    try:
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            fields = _stat_fields(current)
            if fields is None:
                if current == pid:
                    return None
                continue  # a descendant that ended meanwhile
            utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
            total += (utime + stime + cutime + cstime) / _TICKS
            stack.extend(_children(current))
    except (OSError, ValueError, IndexError):
        return None
    return total


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (which may hold spaces): field 3 on."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _children(pid: int) -> list[int]:
    children: list[int] = []
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return children
    for task in tasks:
        try:
            children += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return children
