"""The time limit per test counts the worker's CPU time, up to three times it in wall time
(runtime/harness/cpu_time.py; H48: a correct but slow learner lost points when another learner's
processes, or any load, took the CPU from it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from autograder.runtime import LearnerError, Limits
from autograder.runtime.harness import cpu_time
from autograder.runtime.shared import messages
from tests.framework.toy_sessions import toy_session

#: The sentence a time-out ends with when the worker's stack names where it was stopped.
STOPPED = messages.STOPPED_AT.split("{where}")[0]

TOY = {
    "__init__.py": "",
    "timing.py": """\
        import os
        import time


        def work(seconds, cpu=None):
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
            return "done"


        def nap(seconds):
            time.sleep(seconds)


        def forge():
            os.times = None  # what the worker reports of its CPU time is unusable from now on
        """,
}
BUDGET = 2.0
#: Seconds a timed-out worker may take to be stopped and reported on a loaded machine (seen: 4 s
#: at a load of 6 on 2 cores); the bounds still tell a stopped call from one that ran its course.
STOPPING = 10.0
#: The longest a call may last, in budgets: the wall limit grown by its cap.
LONGEST = cpu_time.WALL_FACTOR + cpu_time.STARVED_FACTOR


@pytest.fixture
def timing(tmp_path):
    for session in toy_session(tmp_path, TOY, limits=Limits(test_timeout=BUDGET)):
        module = session.module("timing")
        module.work(0.0)  # the worker started and the module imported: not part of any timing
        yield session, module


def _hogs(cpu: int, count: int) -> list[subprocess.Popen]:
    busy = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass\n"
    # Each in a session of its own: the kernel shares a CPU between sessions (autogroups)
    return [
        subprocess.Popen([sys.executable, "-c", busy], start_new_session=True) for _ in range(count)
    ]


def test_a_starved_call_may_finish_what_its_budget_pays_for(timing):
    session, module = timing
    cpu = sorted(os.sched_getaffinity(0))[0]
    hogs = _hogs(cpu, 3)
    try:
        time.sleep(0.3)  # the hogs are running
        session.begin_test("starved")
        started = time.monotonic()
        assert module.work(0.8, cpu) == "done"  # 0.8 s of CPU at about a quarter of one CPU
        took = time.monotonic() - started
        assert not session.end_test().timed_out
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    # past the old wall-clock limit, within the wall limit grown by the time it waited for a CPU
    assert BUDGET < took < BUDGET * LONGEST


def _time_out(session, call) -> tuple[float, str]:
    """Run call() in a test of its own, which must run out of time: how long it took (wall
    seconds) and its sentence."""
    session.begin_test("timed")
    started = time.monotonic()
    with pytest.raises(LearnerError) as info:
        call()
    took = time.monotonic() - started
    assert session.end_test().timed_out
    return took, info.value.feedback


def test_a_call_that_computes_past_its_budget_still_times_out_at_it(timing):
    session, module = timing
    took, said = _time_out(session, lambda: module.work(30.0))
    # 2 s of CPU time: as long in wall time on an idle machine, longer on a busy one (the wall
    # limit grows by the time it waited for a CPU, so the sentence is the same at any load);
    # stopping the worker takes seconds more under load, still far from the 30 s asked for
    assert BUDGET - 0.1 < took < BUDGET * LONGEST + STOPPING
    assert said.startswith(f"{messages.TIMEOUT.format(call='work(...)', seconds='2')} {STOPPED}")


def test_a_call_that_waits_times_out_at_the_wall_limit_and_says_so(timing):
    session, module = timing
    took, said = _time_out(session, lambda: module.nap(60))
    wall = BUDGET * cpu_time.WALL_FACTOR
    assert wall - 0.1 < took < wall + STOPPING  # not the 60 s the call asked for
    assert said.startswith(
        f"{messages.TIMEOUT_WAITING.format(call='nap(...)', seconds='6')} {STOPPED}"
    )


def test_a_forged_cpu_count_changes_nothing_the_harness_counts_the_tree(timing):
    """Learner code runs in the worker and may break what it reports of its CPU time: the
    harness reads the tree's count from /proc itself."""
    session, module = timing
    module.forge()
    took, said = _time_out(session, lambda: module.nap(60))
    wall = BUDGET * cpu_time.WALL_FACTOR
    assert wall - 0.1 < took < wall + STOPPING  # a nap, as without the forgery
    assert said.startswith(
        f"{messages.TIMEOUT_WAITING.format(call='nap(...)', seconds='6')} {STOPPED}"
    )


def test_the_tree_of_a_process_counts_its_childrens_time():
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nend = time.process_time() + 0.5\n"
            "while time.process_time() < end: pass\ntime.sleep(30)",
        ]
    )
    try:
        # The child computes 0.5 s, then sleeps: on a loaded machine its half second takes
        # longer in wall time, so wait until it is asleep (its count stops growing).
        deadline, theirs, last = time.monotonic() + 30.0, None, -1.0
        while time.monotonic() < deadline:
            time.sleep(0.5)
            theirs = cpu_time.tree_seconds(child.pid)
            if theirs is not None and theirs >= 0.45 and theirs - last < 0.01:
                break
            last = theirs if theirs is not None else last
        mine = cpu_time.tree_seconds(os.getpid())
        assert theirs is not None and 0.45 <= theirs < 1.5
        assert mine is not None and mine >= theirs  # this process's tree holds the child
    finally:
        child.kill()
        child.wait()
    assert cpu_time.tree_seconds(2**22 + 12345) is None  # no such process
