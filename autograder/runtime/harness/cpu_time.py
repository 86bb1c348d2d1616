"""The CPU time and the run-queue time of a worker's process tree, read from /proc.

The time limit per test counts the CPU time of the worker's process tree (H48: a busy machine
ran correct learners out of wall time), up to WALL_FACTOR times the budget in wall time. That
wall limit grows by the time the tree's threads waited for a CPU (their run-queue delay, from
/proc/PID/task/TID/schedstat), by at most STARVED_FACTOR times the budget. Without /proc the
wall clock is the limit; without schedstat the wall limit does not grow.

Design: docs/internals/runtime.md#cpu-time-and-the-wall-limit.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

#: A call may last at most this many times its CPU budget in wall time.
WALL_FACTOR = 3.0
#: The wall limit of a call grows by the time its tree waited for a CPU, up to this many times
#: its budget more: a computing call that gets a ninth of a CPU still computes its budget.
STARVED_FACTOR = 2 * WALL_FACTOR
#: Less CPU than this fraction of the budget left: the budget counts as spent (the ticks of
#: /proc are 10 ms; a wait of a few ms more would only wake the harness again).
SLACK = 0.01
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = Path("/proc")
#: Bytes per read of a /proc file (stat and schedstat fit in one).
_READ_SIZE = 4096


class TreeSnapshot(NamedTuple):
    """One walk of a process tree: ``cpu``, the seconds tree_seconds counts (None when /proc
    cannot tell), and ``pids``, its live processes (zombies left out), parents first."""

    cpu: float | None
    pids: list[int]


def snapshot(pid: int) -> TreeSnapshot:
    """Process ``pid``'s tree as one walk of /proc finds it: each process's stat and children
    are read once, for both its CPU time and whether it lives."""
    cpu: float | None = 0.0
    found = []
    for current, fields in _walk(pid):
        if not fields:
            cpu = None if current == pid else cpu  # else a descendant that ended meanwhile
            continue
        if fields[0] not in ("Z", "X"):
            found.append(current)
        try:
            cpu = None if cpu is None else cpu + cpu_of(fields)
        except (ValueError, IndexError):
            cpu = None
    return TreeSnapshot(cpu, found)


def tree_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` and its descendants (their threads
    included; children it already waited for, too); None when /proc cannot tell."""
    return snapshot(pid).cpu


def tree_run_queue_seconds(pid: int) -> float | None:
    """Seconds the threads of process ``pid`` and its descendants have spent runnable but not
    running, waiting for a CPU (the second field of each /proc/PID/task/TID/schedstat, in ns);
    None when /proc cannot tell. Threads that ended no longer count: the sum can shrink."""
    total = 0.0
    try:
        for current, fields in _walk(pid):
            value = _run_queue_seconds(current) if fields else None
            if value is None and current == pid:
                return None
            total += value or 0.0  # else a descendant that ended meanwhile
    except (OSError, ValueError, IndexError):
        return None
    return total


def _walk(pid: int) -> Iterator[tuple[int, list[str] | None]]:
    """Process ``pid`` and its descendants, each once, with its stat_fields (None when it
    ended meanwhile, and then its children are not looked for)."""
    stack, seen = [pid], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        fields = stat_fields(current)
        yield current, fields
        if fields:
            stack.extend(children(current))


def cpu_of(fields: list[str]) -> float:
    """utime + stime + cutime + cstime, in seconds, of stat_fields' list; ValueError or
    IndexError when they are not numbers."""
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return (utime + stime + cutime + cstime) / _TICKS


def read_proc(path: str) -> str:
    """The text of a /proc file, read through a plain descriptor (no Path, no buffered file
    object: the harness reads several per call); OSError when it cannot be read."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(descriptor, _READ_SIZE):
            chunks.append(chunk)
    finally:
        os.close(descriptor)
    return b"".join(chunks).decode("ascii", "replace")


def _run_queue_seconds(pid: int) -> float | None:
    """The run-queue delay of process ``pid``'s threads; None when none of them can be read
    (no such process, or a kernel without schedstat)."""
    try:
        tasks = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return None
    total, read = 0, False
    for task in tasks:
        try:
            total += int(read_proc(f"{_PROC}/{pid}/task/{task}/schedstat").split()[1])
        except OSError:
            continue  # a thread that ended meanwhile
        read = True
    return total / 1e9 if read else None


def stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (which may hold spaces): field 3 on."""
    try:
        text = read_proc(f"{_PROC}/{pid}/stat")
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def children(pid: int) -> list[int]:
    """The pids of process ``pid``'s children (of all its threads); [] when it is gone."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(c) for c in read_proc(f"{_PROC}/{pid}/task/{task}/children").split()]
        except OSError:
            continue
    return found
