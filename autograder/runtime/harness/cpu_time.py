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

A call starved of CPU (the machine runs more busy processes than it has cores) is given more
wall time: the wall limit of a call is extended by the time its tree's threads spent runnable
but waiting for a CPU (the kernel's run-queue delay, /proc/PID/task/TID/schedstat, read by
`tree_run_queue_seconds`), by at most STARVED_FACTOR times the budget more. Learner code cannot
use this to run longer than its budget pays for: a runnable thread that gets the CPU spends the
CPU budget, and a sleeping or blocked one waits on no run queue, so the extension never gives a
sleeping call more time. A call still stopped at the wall limit is told why from the same counts
(runtime/harness/answer_wait.py): the machine's, when what it computed and what it slept stay
under the wall limit; the learner's (a sleep, an input() or a lock) otherwise.

Without /proc (another platform) the wall clock is the limit, as before; without schedstat
(a kernel built without it) the wall limit is not extended and time-outs are told as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

#: A call may last at most this many times its CPU budget in wall time.
WALL_FACTOR = 3.0
#: The wall limit of a call grows by the time its tree waited for a CPU, up to this many times
#: its budget more (a call on a machine 9 times as busy as its cores still ends).
STARVED_FACTOR = 2 * WALL_FACTOR
#: Less CPU than this fraction of the budget left: the budget counts as spent (the ticks of
#: /proc are 10 ms; a wait of a few ms more would only wake the harness again).
SLACK = 0.01
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = Path("/proc")


def tree_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` and its descendants (their threads
    included; children it already waited for, too); None when /proc cannot tell."""
    return _tree_sum(pid, _cpu_seconds)


def tree_run_queue_seconds(pid: int) -> float | None:
    """Seconds the threads of process ``pid`` and its descendants have spent runnable but not
    running, waiting for a CPU (the second field of each /proc/PID/task/TID/schedstat, in ns);
    None when /proc cannot tell. Threads that ended no longer count: the sum can shrink."""
    return _tree_sum(pid, _run_queue_seconds)


def _tree_sum(pid: int, count: Callable[[int], float | None]) -> float | None:
    """``count`` summed over process ``pid`` and its descendants (tree_seconds' walk); None
    when ``pid`` itself cannot be counted."""
    total, stack, seen = 0.0, [pid], set()
    try:
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            value = count(current)
            if value is None:
                if current == pid:
                    return None
                continue  # a descendant that ended meanwhile
            total += value
            stack.extend(_children(current))
    except (OSError, ValueError, IndexError):
        return None
    return total


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime + cutime + cstime of /proc/PID/stat, in seconds."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return (utime + stime + cutime + cstime) / _TICKS


def _run_queue_seconds(pid: int) -> float | None:
    """The run-queue delay of process ``pid``'s threads; None when none of them can be read
    (no such process, or a kernel without schedstat)."""
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return None
    total, read = 0, False
    for task in tasks:
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except OSError:
            continue  # a thread that ended meanwhile
        read = True
    return total / 1e9 if read else None


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
