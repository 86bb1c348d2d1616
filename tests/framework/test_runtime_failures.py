"""A live LearnerSession on learner code that hangs, exits, crashes or runs out of memory.

Each kill costs a worker restart (a few seconds: the worker imports torch), so the limits are
small and the module shares one session.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from autograder.runtime import LearnerError, LearnerSession, Limits
from autograder.runtime.harness.cpu_time import STARVED_FACTOR, WALL_FACTOR
from autograder.runtime.harness.stopped_at import STOPPED_AT
from autograder.runtime.shared import messages
from tests.framework.toy_sessions import toy_session
from tests.processes import running_with

MEMORY_MB = 1536

TOY = {
    # __init__ hangs: the first import times out, later workers use a bare package.
    "__init__.py": """\
        import time
        while True:
            time.sleep(0.05)
        """,
    "hang_at_import.py": """\
        while True:
            pass
        """,
    "bad.py": """\
        import ctypes
        import os
        import subprocess
        import sys

        import numpy as np


        def ok(x):
            return x + 1


        def spin(x):
            while True:
                x += 1


        def pid():
            return os.getpid()


        def spawn_sleeper(marker):
            return subprocess.Popen(["sleep", marker]).pid


        def quit_politely():
            sys.exit(2)


        def hard_exit():
            print("about to leave")
            os._exit(3)


        def segfault():
            return ctypes.string_at(0)


        def hog():
            return np.ones(1 << 29)  # 4 GiB


        class Model:
            def value(self):
                return 7


        def stall(x):
            while True:
                x += 1


        def chatter(x):
            print("started")
            while True:
                x += 1
        """,
}


def process_gone(pid: int) -> bool:
    """True once pid no longer runs (gone, or a zombie waiting for its reaper)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def worker_pid(session: LearnerSession) -> int:
    """The worker's outermost process as the harness sees it (under namespaces, learner code
    sees other pids: it is PID 1 of its own namespace)."""
    return session._channel.worker.process.pid


def pids_left_running(marker: str, settle: float = 2.0) -> list[int]:
    """Live processes, anywhere on the machine, whose command line holds marker, as they stand
    ``settle`` seconds from now: a process the harness killed may still be dying for a moment
    (SIGKILL is delivered when the kernel next schedules it), and one just exec'd reads an
    empty command line until the kernel has set the new program up; neither lasts seconds."""
    time.sleep(settle)
    return sorted(running_with(marker))


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        time.sleep(0.05)
    return process_gone(pid)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):
    yield from toy_session(
        tmp_path_factory.mktemp("submission"),
        TOY,
        limits=Limits(test_timeout=2, import_timeout=2, memory_mb=MEMORY_MB),
        display_dir="assignments/toypkg",  # messages name files as the learner's repository does
    )


@pytest.fixture(scope="module")
def bad(session):
    return session.module("bad")


def test_a_hanging_package_init_is_skipped_after_its_time_out(session, bad):
    assert bad.ok(1) == 2
    error = session.package_init_error
    assert error is not None and error.kind == "timeout"
    waiting = messages.IMPORT_TIMEOUT_WAITING.format(  # it sleeps: 3 x 2 s
        file="assignments/toypkg/__init__.py", seconds="6"
    )
    assert error.feedback in [  # the sleep, or the loop around it, as it was stopped
        f"{waiting} {STOPPED_AT.format(where=f'assignments/toypkg/__init__.py:{n} in <module>')}"
        for n in (2, 3)
    ]


def test_an_infinite_loop_times_out_and_the_next_call_gets_a_fresh_worker(session, bad):
    model = bad.Model()
    assert model.value() == 7
    old_pid = worker_pid(session)
    session.begin_test("loop")
    started = time.monotonic()
    with pytest.raises(LearnerError) as info:
        bad.spin(0)
    # 2 s of CPU, in at most 2 x 9 s of wall time on a busy machine (cpu_time.py), then the kill
    assert 1.9 < time.monotonic() - started < 2 * (WALL_FACTOR + STARVED_FACTOR) + 10
    assert info.value.kind == "timeout"
    assert info.value.feedback in [  # either line of the loop, as it was stopped
        "spin(...) did not finish within 2 s of computing (the time limit per test, counting "
        "any process it started) — look for an infinite loop or a very slow step. When it was "
        f"stopped, it was running assignments/toypkg/bad.py:{line} in spin."
        for line in (14, 15)
    ]
    assert wait_gone(old_pid)
    with pytest.raises(LearnerError) as info:
        bad.ok(1)  # the test's budget is spent: this call gets no time at all
    assert info.value.kind == "timeout"
    assert session.end_test().timed_out
    assert bad.ok(41) == 42  # outside a test each call has the full limit, in a fresh worker
    assert worker_pid(session) != old_pid
    with pytest.raises(LearnerError) as info:
        model.value()
    assert info.value.kind == "crash"
    assert info.value.feedback == messages.STALE_OBJECT.format(type_name="Model")


def test_a_time_out_names_its_line_and_the_stack_is_not_the_learners_output(session, bad):
    session.begin_test("chatter")
    with pytest.raises(LearnerError) as info:
        bad.chatter(0)
    test = session.end_test()
    assert info.value.feedback.endswith(  # either line of the loop, as it was stopped
        tuple(
            STOPPED_AT.format(where=f"assignments/toypkg/bad.py:{n} in chatter") for n in (55, 56)
        )
    )
    assert "".join(test.output) == "started\n"  # the stack the harness asked for is cut off


def test_a_function_that_timed_out_in_two_tests_fails_at_once_in_the_third(session, bad):
    for name in ("first", "second"):
        session.begin_test(name)
        with pytest.raises(LearnerError) as info:
            bad.stall(0)
        assert info.value.feedback.startswith("stall(...) did not finish within 2 s")
        assert session.end_test().timed_out
    session.begin_test("third")
    started = time.monotonic()
    with pytest.raises(LearnerError) as info:
        bad.stall(0)
    assert time.monotonic() - started < 1.5  # no third wait of the full limit
    assert info.value.kind == "timeout"
    assert info.value.feedback == messages.NOT_RUN_AFTER_HANGS.format(
        call="stall(...)", count=2, seconds="2"
    )
    assert session.end_test().timed_out
    assert bad.ok(1) == 2  # other functions are still called normally


def test_an_infinite_loop_at_import_fails_that_module_only_and_is_remembered(session, bad):
    hanging = session.module("hang_at_import")
    with pytest.raises(LearnerError) as info:
        hanging.anything()
    assert info.value.kind == "timeout"
    assert info.value.feedback in [  # either line of the loop, as it was stopped
        messages.IMPORT_TIMEOUT.format(file="assignments/toypkg/hang_at_import.py", seconds="2")
        + " "
        + STOPPED_AT.format(where=f"assignments/toypkg/hang_at_import.py:{line} in <module>")
        for line in (1, 2)
    ]
    started = time.monotonic()
    with pytest.raises(LearnerError) as again:
        hanging.other()
    assert again.value is info.value and time.monotonic() - started < 0.5
    assert bad.ok(1) == 2


def test_sys_exit_is_an_error_and_the_worker_survives(session, bad):
    bad.pid()
    pid = worker_pid(session)
    with pytest.raises(LearnerError) as info:
        bad.quit_politely()
    assert info.value.kind == "exit" and info.value.is_instance("SystemExit")
    assert info.value.location == "assignments/toypkg/bad.py:27 in quit_politely"
    bad.pid()
    assert worker_pid(session) == pid


def test_os_exit_is_a_crash_naming_the_exit_status(session, bad):
    session.begin_test("os._exit")
    with pytest.raises(LearnerError) as info:
        bad.hard_exit()
    assert info.value.kind == "crash"
    assert info.value.feedback == messages.CRASH_EXIT.format(call="hard_exit(...)", status=3)
    assert "os._exit()" in info.value.feedback
    assert "about to leave" in session.end_test().output
    assert bad.ok(1) == 2


def test_a_segfault_is_a_crash_naming_the_signal(bad):
    with pytest.raises(LearnerError) as info:
        bad.segfault()
    assert info.value.kind == "crash"
    assert "was killed by SIGSEGV (a segmentation fault" in info.value.feedback
    assert info.value.feedback.startswith("The process running segfault(...)")
    assert bad.ok(1) == 2


def test_memory_error_under_the_memory_limit(session, bad):
    bad.pid()
    pid = worker_pid(session)
    with pytest.raises(LearnerError) as info:
        bad.hog()
    assert info.value.kind == "memory" and info.value.is_instance("MemoryError")
    assert f"(the limit is {MEMORY_MB} MB)" in info.value.feedback
    assert info.value.location == "assignments/toypkg/bad.py:40 in hog"
    bad.pid()
    assert worker_pid(session) == pid


def test_output_of_the_worker_never_reaches_the_harness(capfd, bad):
    assert bad.ok(1) == 2
    captured = capfd.readouterr()
    assert "about to leave" not in captured.out + captured.err


def test_close_leaves_no_process_behind_and_a_call_leaves_none_either(session, bad):
    """Runs last: it closes the module's session."""
    bad.pid()
    pid = worker_pid(session)
    marker = f"{60 + os.getpid() % 1000 / 1000:.3f}"  # sleep 60.xyz: unique to this test run
    bad.spawn_sleeper(marker)
    private_root = session._channel.worker.root
    # the sleeper the call started was stopped when it answered (process_tree.py)
    assert not process_gone(pid) and pids_left_running(marker) == []
    session.close()
    assert wait_gone(pid)
    assert not private_root.exists()
    session.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        bad.ok(1)
