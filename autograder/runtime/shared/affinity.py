"""Which CPUs a process may run on: a harness and its worker share one.

A harness and its worker take turns, and a turn that wakes a process on another CPU costs about
as much as the call. So a batch's harness child runs on one CPU (batch/harness_pool.py) and its
workers run where their harness may run: a fresh worker inherits that, a worker forked by the
zygote is given it (zygote_client.spawn). Where the platform has no CPU affinity (macOS) these
functions do nothing.

Design (the measurement): docs/internals/runtime.md#cpu-affinity.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


def allowed() -> list[int]:
    """The CPUs this process may run on, in order ([] where the platform cannot say)."""
    if not hasattr(os, "sched_getaffinity"):
        return []
    return sorted(os.sched_getaffinity(0))


def run_on(cpus: Iterable[int]) -> bool:
    """Let this process run only on ``cpus``; False when that cannot be done (no such CPU, a
    platform without affinity, an empty set). Never raises: where a process runs changes its
    speed, not its results."""
    wanted = {cpu for cpu in cpus if type(cpu) is int and cpu >= 0}
    if not wanted or not hasattr(os, "sched_setaffinity"):
        return False
    try:
        os.sched_setaffinity(0, wanted)
    except (OSError, ValueError, OverflowError):
        return False
    return True
