"""A call starved of CPU by a busy machine is given the wall time it waited for a processor, and
one stopped all the same is told as the machine's failure, not the learner's
(runtime/harness/answer_wait.py, cpu_time.tree_run_queue_seconds)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.results import SUMMARY_GRADER_ERRORS, build_grade, capitalised
from autograder.runtime import LearnerError, Limits, MachineBusy
from autograder.runtime.harness import cpu_time, failures
from autograder.runtime.harness.answer_wait import CallClock, Wait, wait_for_answer
from autograder.runtime.shared import messages
from tests.framework.mini_course import by_name, make_course, run
from tests.framework.test_runtime_cpu_time import TOY  # work(seconds) computes, nap sleeps
from tests.framework.toy_sessions import toy_session

# -- the tree's run-queue time, from a /proc written by hand -------------------------------------


def _process(root: Path, pid: int, tasks: dict[int, str | None], cpu_ticks: int = 0) -> None:
    """/proc/PID of a fake process: its stat (``cpu_ticks`` of user time) and, per thread id,
    its schedstat text (None: no schedstat file) and its children."""
    folder = root / str(pid)
    fields = ["S", *["1"] * 10, str(cpu_ticks), "0", "0", "0", *["0"] * 5]
    (folder / "task").mkdir(parents=True)
    (folder / "stat").write_text(f"{pid} (a name) {' '.join(fields)}\n")
    for tid, schedstat in tasks.items():
        (folder / "task" / str(tid)).mkdir()
        (folder / "task" / str(tid) / "children").write_text("")
        if schedstat is not None:
            (folder / "task" / str(tid) / "schedstat").write_text(schedstat)


@pytest.fixture
def proc(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_time, "_PROC", tmp_path)
    return tmp_path


def test_the_run_queue_time_of_a_tree_sums_every_thread_of_every_process(proc):
    _process(proc, 100, {100: "5000000000 1500000000 40\n", 101: "10 250000000 3\n"})
    _process(proc, 200, {200: "7 2000000000 9\n"})
    _process(proc, 300, {300: "7 4000000000 9\n"})  # not a descendant: not counted
    (proc / "100" / "task" / "101" / "children").write_text("200")
    assert cpu_time.tree_run_queue_seconds(100) == pytest.approx(1.5 + 0.25 + 2.0)
    assert cpu_time.tree_run_queue_seconds(200) == pytest.approx(2.0)


def test_a_thread_or_child_that_ended_meanwhile_is_left_out(proc):
    _process(proc, 100, {100: "1 1000000000 1\n", 101: None})  # thread 101 ended
    (proc / "100" / "task" / "100" / "children").write_text("200")  # child 200 ended
    assert cpu_time.tree_run_queue_seconds(100) == pytest.approx(1.0)


def test_without_schedstat_or_without_the_process_the_run_queue_time_is_unknown(proc):
    _process(proc, 100, {100: None, 101: None})  # a kernel built without schedstat
    assert cpu_time.tree_run_queue_seconds(100) is None
    assert cpu_time.tree_run_queue_seconds(999) is None
    (proc / "100" / "task" / "100" / "schedstat").write_text("garbage")
    assert cpu_time.tree_run_queue_seconds(100) is None


def test_the_cpu_time_of_a_tree_walks_the_same_tree(proc):
    ticks = os.sysconf("SC_CLK_TCK")
    _process(proc, 100, {100: "1 1 1\n"}, cpu_ticks=2 * ticks)
    _process(proc, 200, {200: "1 1 1\n"}, cpu_ticks=ticks // 2)
    (proc / "100" / "task" / "100" / "children").write_text("200\n")
    assert cpu_time.tree_seconds(100) == pytest.approx(2.5)


def test_a_sleeping_process_gains_no_run_queue_time():
    """What keeps the wall limit's growth from serving a sleeping call, on this kernel."""
    if not Path("/proc/self/task").is_dir():
        pytest.skip("no /proc on this platform")
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.3)  # it is asleep
        before = cpu_time.tree_run_queue_seconds(sleeper.pid)
        time.sleep(0.5)
        after = cpu_time.tree_run_queue_seconds(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert before is not None and after == before


# -- which time-outs are the machine's ----------------------------------------------------------

CLOCK = CallClock(cpu=2.0, wall=6.0, submission=100.0, baseline=0.0)


def _stopped(elapsed: float, computed: float, starved: float | None) -> Wait:
    return Wait("f(...)", waiting=True, elapsed=elapsed, computed=computed, starved=starved)


def test_a_call_starved_past_the_cap_and_under_its_own_limit_is_the_machines():
    # 18 s: 0.2 computing, 17 waiting for a CPU, 0.8 asleep; it would run on an idle machine
    assert _stopped(18.0, 0.2, 17.0).machine_busy(CLOCK)


def test_a_call_given_back_all_its_run_queue_time_was_stopped_by_its_own_sleep():
    # 5 s of run-queue time were added to its 6 s: it slept 5.5 s of its own, past the margin
    # of 4 s its wall limit gives over its CPU budget
    assert not _stopped(11.0, 0.5, 5.0).machine_busy(CLOCK)


def test_a_call_that_slept_past_its_limit_on_its_own_is_the_learners_however_busy():
    # starved for 12.5 s (past the cap of 12) but asleep for 6 s of its own
    assert not _stopped(18.6, 0.1, 12.5).machine_busy(CLOCK)


def test_without_a_run_queue_count_or_at_the_submissions_end_nothing_is_the_machines():
    assert not _stopped(18.0, 0.2, None).machine_busy(CLOCK)
    cut = _stopped(18.0, 0.2, 17.0)
    cut.cut = True
    assert not cut.machine_busy(CLOCK)
    answered = Wait("f(...)", waiting=False, elapsed=18.0, computed=0.2, starved=17.0)
    assert not answered.machine_busy(CLOCK)


def test_the_machines_sentence_gives_the_seconds_of_a_call_and_of_an_import():
    stopped = _stopped(9.04, 0.13, 8.12)
    assert str(failures.machine_busy("f(...)", stopped)) == messages.MACHINE_BUSY.format(
        call="f(...)", seconds="9", starved="8.1", computed="0.1"
    )
    label = f"{failures.IMPORT_LABEL}assignments/t101/softmax.py"
    assert failures.machine_busy(label, stopped).feedback == messages.IMPORT_MACHINE_BUSY.format(
        file="assignments/t101/softmax.py", seconds="9", starved="8.1", computed="0.1"
    )


# -- the wait, on counts that follow the wall clock -----------------------------------------------


class _Silent:
    """A worker that never answers: its connection and its process id."""

    class conn:
        @staticmethod
        def send_bytes(frame: bytes) -> None:
            pass

        @staticmethod
        def poll(timeout: float) -> bool:
            time.sleep(timeout)
            return False

    class process:
        pid = 4242


def _wait_with(monkeypatch, clock: CallClock, computing: float, starving: float) -> Wait:
    """Wait on a worker whose tree computes ``computing`` and waits for a CPU ``starving`` of
    each wall second."""
    started = time.monotonic()
    monkeypatch.setattr(
        cpu_time, "tree_seconds", lambda pid: computing * (time.monotonic() - started)
    )
    monkeypatch.setattr(
        cpu_time, "tree_run_queue_seconds", lambda pid: starving * (time.monotonic() - started)
    )
    return wait_for_answer(_Silent(), b"request", Wait("f(...)"), clock, None, 1 << 20)  # type: ignore[arg-type]


SMALL = CallClock(cpu=0.2, wall=0.6, submission=100.0, baseline=0.0)


def test_a_starved_call_computes_its_whole_budget_past_the_plain_wall_limit(monkeypatch):
    # a quarter of a CPU: 0.2 s of CPU take 0.8 s, past 0.6 s, and the 0.6 s it waited for a
    # CPU by then keep the limit ahead of it
    wait = _wait_with(monkeypatch, SMALL, computing=0.25, starving=0.75)
    assert not wait.answered and not wait.waiting  # stopped by its CPU budget
    assert 0.75 < wait.elapsed < 0.95
    assert wait.computed == pytest.approx(0.2, abs=0.02)
    assert not wait.machine_busy(SMALL)


def test_a_call_starved_past_the_cap_stops_there_as_the_machines(monkeypatch):
    # a tenth of a CPU: its limit grows by at most 1.2 s (2 x 3 x 0.2), to 1.8 s
    wait = _wait_with(monkeypatch, SMALL, computing=0.1, starving=0.9)
    assert wait.waiting and wait.grown == pytest.approx(SMALL.starved_cap)
    assert 1.8 <= wait.elapsed < 2.0
    assert wait.machine_busy(SMALL)


def test_a_sleeping_call_gains_nothing_and_stops_at_the_plain_wall_limit(monkeypatch):
    wait = _wait_with(monkeypatch, SMALL, computing=0.01, starving=0.0)
    assert wait.waiting and wait.grown == 0.0
    assert 0.6 <= wait.elapsed < 0.75
    assert not wait.machine_busy(SMALL)


def test_the_submissions_end_bounds_a_starved_call(monkeypatch):
    clock = CallClock(cpu=0.2, wall=0.6, submission=0.9, baseline=0.0)
    wait = _wait_with(monkeypatch, clock, computing=0.1, starving=0.9)
    assert wait.cut and 0.9 <= wait.elapsed < 1.05
    assert not wait.machine_busy(clock)


# -- a real worker starved by a busy process on its CPU ------------------------------------------

BUDGET = 1.0
#: Seconds a stopped worker may take to be killed and reported on a loaded machine.
STOPPING = 10.0
BUSY = re.compile(
    re.escape(messages.MACHINE_BUSY)
    .replace(re.escape("{call}"), "work\\(\\.\\.\\.\\)")
    .replace(re.escape("{seconds}"), r"(?P<seconds>[\d.]+)")
    .replace(re.escape("{starved}"), r"(?P<starved>[\d.]+)")
    .replace(re.escape("{computed}"), r"(?P<computed>[\d.]+)")
)


@pytest.fixture
def toy(tmp_path):
    # one strike is enough to refuse a call: a busy machine's stop must not be one
    limits = Limits(test_timeout=BUDGET, import_timeout=30, hang_strikes=1)
    for session in toy_session(tmp_path, TOY, limits=limits):
        module = session.module("timing")
        module.work(0.0)  # the worker started and the module imported
        yield session, module


def _tree(pid: int) -> tuple[list[int], list[int]]:
    """The process ids of process ``pid`` and its descendants, and their thread ids."""
    processes, threads, stack = [], [], [pid]
    while stack:
        processes.append(stack.pop())
        for task in Path(f"/proc/{processes[-1]}/task").iterdir():
            threads.append(int(task.name))
            stack += [int(c) for c in (task / "children").read_text().split()]
    return processes, threads


def _starve(session, cpu: int) -> None:
    """Every thread of the worker's tree on ``cpu`` at the lowest priority, and each of its
    processes' autogroups too (where the kernel groups the processes of a session, priorities
    count within a group only; a confined worker's learner process leads a session of its
    own)."""
    processes, threads = _tree(session._channel.worker.process.pid)
    for tid in threads:
        os.sched_setaffinity(tid, {cpu})
        os.setpriority(os.PRIO_PROCESS, tid, 19)
    for pid in processes:
        autogroup = Path(f"/proc/{pid}/autogroup")
        if autogroup.exists():
            autogroup.write_text("19")


@contextmanager
def _busy_machine(session) -> Iterator[None]:
    """The worker starved (`_starve`) beside a busy loop on its CPU at the normal priority, in
    this process's session, for the time of the block."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    _starve(session, cpu)
    busy = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass\n"
    hog = subprocess.Popen([sys.executable, "-c", busy])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def _timed(session, call, expected: type[Exception]) -> tuple[float, Exception, bool]:
    """Run call() in a test of its own on a busy machine, where it must raise ``expected``:
    its wall seconds, the error, and whether the test counts a time-out."""
    with _busy_machine(session):
        session.begin_test("busy")
        started = time.monotonic()
        with pytest.raises(expected) as info:
            call()
        took = time.monotonic() - started
        timed_out = session.end_test().timed_out
    return took, info.value, timed_out


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_a_computing_call_starved_by_a_busy_machine_is_not_the_learners_time_out(toy):
    session, module = toy
    took, error, timed_out = _timed(session, lambda: module.work(30.0), MachineBusy)
    assert not timed_out
    said = BUSY.fullmatch(error.feedback)
    assert said is not None, error.feedback
    seconds, starved = float(said["seconds"]), float(said["starved"])
    # stopped once the limit of 3 s had grown by its cap of 6 s, having computed little
    limit = BUDGET * (cpu_time.WALL_FACTOR + cpu_time.STARVED_FACTOR)
    assert limit - 0.1 <= seconds < took < limit + STOPPING
    assert BUDGET * cpu_time.STARVED_FACTOR <= starved < seconds
    assert float(said["computed"]) < BUDGET / 2
    session.begin_test("after")  # no strike: the call is run again, and finishes
    assert module.work(0.1) == "done"
    assert not session.end_test().timed_out


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_a_sleeping_call_on_a_busy_machine_is_still_told_it_waited(toy):
    session, module = toy
    took, error, timed_out = _timed(session, lambda: module.nap(60), LearnerError)
    assert timed_out
    wall = BUDGET * cpu_time.WALL_FACTOR
    # a sleeping thread waits on no run queue: only getting the request to the sleep was starved
    assert wall - 0.1 < took < wall + 1.0 + STOPPING
    assert error.kind == "timeout"
    waiting = messages.TIMEOUT_WAITING.format(call="nap(...)", seconds="3")
    assert error.feedback.startswith(f"{waiting} {messages.STOPPED_AT.split('{where}')[0]}")


# -- what a grader test makes of it ---------------------------------------------------------------

SENTENCE = messages.MACHINE_BUSY.format(call="f(...)", seconds="9", starved="8.1", computed="0.1")
BUSY_GRADERS = {
    "graders/visible/test_busy.py": f"""
        import pytest

        from autograder.runtime import MachineBusy

        @pytest.mark.alpha
        def test_starved():
            raise MachineBusy({SENTENCE!r})

        @pytest.mark.alpha
        def test_fine():
            pass
    """,
    "graders/hidden/test_busy_hidden.py": f"""
        import pytest

        from autograder.runtime import MachineBusy

        @pytest.mark.beta
        def test_starved_hidden():
            raise MachineBusy({SENTENCE!r})
    """,
}


def test_a_call_the_machine_starved_fails_its_test_as_a_grader_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_course(tmp_path, BUSY_GRADERS)
    _, collector, output = run(tmp_path, "graders")
    results = by_name(collector)
    for name in ("test_starved", "test_starved_hidden"):
        assert results[name].error_kind == "grader_error"
        # a hidden test's too: it holds no input; capitalised as pytest and the grade tell it
        assert results[name].message == capitalised(SENTENCE)
    assert sorted(collector.grader_errors) == [
        f"graders/hidden/test_busy_hidden.py::test_starved_hidden: {SENTENCE}",
        f"graders/visible/test_busy.py::test_starved: {SENTENCE}",
    ]
    grade = build_grade(
        load_course(tmp_path / "course.toml"),
        collector.results,
        submission="mini",
        seed=0,
        hidden_included=True,
        grader_errors=collector.grader_errors,
    )
    # the learner and the instructor are told: not a silent loss of points
    assert SUMMARY_GRADER_ERRORS.format(count=2) in grade.summary_text()
    assert grade.to_gradescope()["extra_data"]["grader_errors"] == collector.grader_errors
    assert not grade.all_passed
    assert "Traceback" not in output
