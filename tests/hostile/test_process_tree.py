"""Processes learner code starts in its worker: none outlives the call that started it, and
their CPU time is the call's.

The red team's case: at import, learner code started 40 busy shells, each in a session of its
own, and its calls slept; the worker counted only its own CPU time, so none of its tests timed
out while the shells starved a neighbour graded at the same time.
"""

from __future__ import annotations

import os
import re
import time

import pytest

from autograder.runtime import LearnerError, Limits
from autograder.runtime.harness import budget, process_tree
from tests.framework.toy_sessions import toy_session
from tests.hostile.test_budgets import namespaces_only
from tests.processes import running_with

LEAVER = {
    "__init__.py": "",
    "leaver.py": """\
        import os
        import subprocess
        import time


        def leave(count, marker):
            for _ in range(count):  # each its own session, as the red team's shells
                subprocess.Popen(["sh", "-c", "sleep 300; :", marker], start_new_session=True)
            if os.fork() == 0:  # and one that double-forks out of the tree's middle
                os.setsid()
                if os.fork() == 0:
                    os.execvp("sh", ["sh", "-c", "sleep 300; :", marker])
                os._exit(0)
            return "left"


        def burn_while_sleeping(count, seconds):
            for _ in range(count):
                subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
            time.sleep(seconds)
            return "slept"


        def burn_in_children(count, seconds):
            import sys
            burn = "import time; t = time.process_time\\nwhile t() < %s: pass" % seconds
            started = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(count)]
            for child in started:
                child.wait()
            return "burnt"


        def burn_after_returning(seconds):
            import threading
            burn = lambda: [None for _ in iter(lambda: time.thread_time() < seconds, False)]
            threading.Thread(target=burn, daemon=True).start()
            return "returned"


        def fine():
            return 1
        """,
}


def _gone(marker: str, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while running_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return running_with(marker) == {}


def test_processes_a_call_leaves_running_are_stopped_and_the_test_says_so(tmp_path):
    namespaces_only()
    for session in toy_session(tmp_path, LEAVER):
        module = session.module("leaver")
        marker = f"t101-leave-{os.getpid()}-{time.monotonic_ns()}"
        session.begin_test("leave")
        assert module.leave(3, marker) == "left"
        assert _gone(marker, 1.0)  # stopped when the answer came, not with the worker
        assert module.fine() == 1  # the worker itself lives on
        trace = session.end_test()
        # 4 shells, and the sleeps of those that had started theirs
        said = re.search(
            r"leave\(\.\.\.\) left (\d+) processes running after it returned; "
            r"they were stopped",
            trace.output,
        )
        assert said is not None and 4 <= int(said[1]) <= 8, trace.output
        assert not trace.timed_out


@pytest.mark.parametrize(
    ("call", "args"),
    [
        # the call sleeps while its children burn CPU: it is charged their time
        ("burn_while_sleeping", (2, 2.5)),
        # the call answers in time, but its children computed past its budget: 1.6 CPU
        # seconds, 0.8 s on two free cores
        ("burn_in_children", (4, 0.4)),
    ],
    ids=["children-burn-while-it-sleeps", "answered-in-time-children-past-budget"],
)
def test_a_call_is_charged_the_cpu_its_children_computed(tmp_path, call, args):
    namespaces_only()
    limits = Limits(test_timeout=1, import_timeout=30)
    for session in toy_session(tmp_path, LEAVER, limits=limits):
        module = session.module("leaver")
        module.fine()
        session.begin_test("burn")
        with pytest.raises(LearnerError) as info:
            getattr(module, call)(*args)
        assert info.value.kind == "timeout"
        assert session.end_test().timed_out


def test_a_quick_answer_is_a_time_out_when_the_tree_counted_more_than_the_budget(
    tmp_path, monkeypatch
):
    # /proc's count, as the harness reads it after the call: 2 s more than the last call left
    # the tree with (the baseline), of a 1 s budget
    limits = Limits(test_timeout=1, import_timeout=30)
    walk = process_tree.snapshot
    for session in toy_session(tmp_path, LEAVER, limits=limits):
        module = session.module("leaver")
        module.fine()

        def counted(pid):
            tree = walk(pid)
            return tree._replace(cpu=None if tree.cpu is None else tree.cpu + 2.0)

        monkeypatch.setattr(process_tree, "snapshot", counted)
        session.begin_test("quick")
        with pytest.raises(LearnerError) as info:
            module.fine()
        assert info.value.kind == "timeout"
        assert session.end_test().timed_out


def test_a_thread_left_computing_after_its_call_answered_is_charged_to_the_next_call(tmp_path):
    # A call's baseline is the count when the last call ended (the tree's and the worker's
    # own), not when it starts: 1.5 CPU seconds a thread burnt between the calls are the next
    # call's, of 1 s.
    limits = Limits(test_timeout=1, import_timeout=30)
    for session in toy_session(tmp_path, LEAVER, limits=limits):
        module = session.module("leaver")
        assert module.burn_after_returning(1.5) == "returned"
        time.sleep(2.5)  # the thread computes while no call runs
        session.begin_test("next")
        with pytest.raises(LearnerError) as info:
            module.fine()
        assert info.value.kind == "timeout"
        assert session.end_test().timed_out


def test_the_charge_is_the_trees_count_when_the_worker_reports_less():
    # learner code may rewrite the worker's own count: it never lowers the tree's
    assert budget.charged_seconds(10.0, 14.5, 3.0, 3.0) == pytest.approx(4.5)
    assert budget.charged_seconds(10.0, 11.0, 3.0, 5.0) == pytest.approx(2.0)
    assert budget.charged_seconds(None, None, 3.0, 3.25) == pytest.approx(0.25)
    assert budget.charged_seconds(None, 2.0, None, 1.0) is None


def test_the_workers_own_processes_are_killed_first_by_the_oom_killer(tmp_path):
    for session in toy_session(tmp_path, LEAVER):
        session.module("leaver").fine()
        worker = session._channel.worker
        assert worker.own_pids
        for pid in worker.own_pids:
            with open(f"/proc/{pid}/oom_score_adj", encoding="ascii") as file:
                assert int(file.read()) == process_tree.OOM_FIRST
