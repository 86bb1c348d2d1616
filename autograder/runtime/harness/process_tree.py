"""The processes learner code started in its worker: found in /proc, stopped after each call.

A worker's process tree is walked from the process the harness started, through the children
/proc lists for each of its threads (cpu_time.snapshot's walk). Confined in a pid namespace, the
worker is the namespace's init: processes that double-fork or call setsid are re-parented to
it and stay in the tree. Without a pid namespace (level ``process-group``) such an orphan
leaves the tree and is only stopped with the worker's process group, when it did not leave it.

When the worker is ready, before any learner code runs, its tree is the worker's own
(``own_pids``); after each call the harness kills every other live process of the tree, so no
process a call started outlives the call, and sets each of the worker's ``oom_score_adj`` to
the highest value, so the kernel's OOM killer takes learner code before anyone else's.

Documented: docs/operations/limits.md#how-the-time-limit-counts.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from autograder.runtime.harness.cpu_time import TreeSnapshot, snapshot

__all__ = ["TreeSnapshot", "snapshot", "tree_pids", "stop_strays", "oom_first", "strays_sentence"]

_PROC = Path("/proc")
#: The OOM killer's preference for a process, at its highest: killed first.
OOM_FIRST = 1000
#: At most this many rounds of killing (a tree that forks while it is killed).
KILL_ROUNDS = 5


def tree_pids(pid: int) -> list[int]:
    """Process ``pid`` and its live descendants (zombies left out), parents first."""
    return snapshot(pid).pids


def stop_strays(pid: int, own: frozenset[int], seen: list[int] | None = None) -> int:
    """Kill (SIGKILL) every live process of ``pid``'s tree that is not in ``own`` (the
    worker's own processes); return how many there were. ``seen``: the tree's pids as a walk
    just found them (snapshot), for the first round. A process that ended meanwhile, or that
    the harness may not signal, is skipped."""
    stopped: set[int] = set()
    for round_ in range(KILL_ROUNDS):
        pids = seen if round_ == 0 and seen is not None else tree_pids(pid)
        strays = [p for p in pids if p not in own]
        if not strays:
            break
        for stray in strays:
            try:
                os.kill(stray, signal.SIGKILL)
            except OSError:
                continue
            stopped.add(stray)
    return len(stopped)


def oom_first(pids: list[int]) -> None:
    """Set ``oom_score_adj`` of each of ``pids`` to OOM_FIRST (children inherit it); a process
    the harness may not write it for keeps its own."""
    for pid in pids:
        try:
            (_PROC / str(pid) / "oom_score_adj").write_text(str(OOM_FIRST))
        except OSError:
            continue


def strays_sentence(label: str, count: int) -> str:
    """The feedback line of a call that left ``count`` processes running when it returned."""
    noun = "process" if count == 1 else "processes"
    return (
        f"[grader] {label} left {count} {noun} running after it returned; they were stopped "
        "(a call's processes must end before it returns).\n"
    )
