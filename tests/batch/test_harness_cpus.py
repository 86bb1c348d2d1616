"""A batch's harness children each run on one CPU, different ones while there are CPUs to go
round, and each learner's worker runs on its harness's CPU (runtime/shared/affinity.py says why)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.batch.conftest import start_slow_class
from tests.processes import children, cmdline, session_pid


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs CPU affinity and two CPUs",
)
def test_each_harness_child_and_its_worker_share_one_cpu(tmp_path: Path) -> None:
    slow = ["a-slow", "b-slow"]
    process, _ = start_slow_class(tmp_path, slow, slow, jobs=2, stderr=subprocess.DEVNULL)
    try:
        harness_cpus, worker_cpus = _wait_for_two_workers(process.pid)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    assert len(harness_cpus) == 2 and all(len(cpus) == 1 for cpus in harness_cpus)
    assert harness_cpus[0] != harness_cpus[1]  # two CPUs for two children
    # Every process of both workers runs on one of the two, each worker on its own.
    assert sorted(worker_cpus, key=sorted) == sorted(harness_cpus, key=sorted)


def _wait_for_two_workers(command: int) -> tuple[list[set[int]], list[set[int]]]:
    """The CPUs of the session's two harness children and of the two workers the zygote forked
    (each worker's processes together), once both workers run learner code."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.2)
        session = session_pid(command)
        zygotes = [
            pid
            for pid in children(command)
            if "autograder.runtime.worker.zygote" in cmdline(pid).split()
        ]
        if session is None or len(zygotes) != 1:
            continue
        harnesses = children(session)
        workers = children(zygotes[0])
        if len(harnesses) != 2 or len(workers) != 2:
            continue
        time.sleep(2)  # both workers well into learner code (which sleeps a minute)
        try:
            harness_cpus = [os.sched_getaffinity(pid) for pid in harnesses]
            worker_cpus = []
            for worker in workers:
                processes = [worker, *_descendants(worker)]
                worker_cpus.append({cpu for pid in processes for cpu in os.sched_getaffinity(pid)})
        except ProcessLookupError:
            continue
        return harness_cpus, worker_cpus
    pytest.fail("the batch did not start two workers within 120 s")
