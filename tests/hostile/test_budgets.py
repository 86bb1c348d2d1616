"""What a submission may cost the grading machine: disk, processes, time, whatever it does.

Each case is learner code aimed at one resource: filling the disk (one stream of large files,
or very many small ones), writing outside its own copy, starting many busy processes, sleeping
at import while a function keeps crashing the worker, hanging until the submission's wall
budget runs out. Every one ends with a sentence for the learner and within its limits.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from autograder.runtime import LearnerError, Limits
from autograder.runtime.harness import isolation, zygote_client
from autograder.runtime.shared import messages
from tests.framework.toy_sessions import toy_session
from tests.processes import running_with

FILLER = {
    "__init__.py": "",
    "filler.py": """\
        import os


        def fill(mb_per_file, files):
            for i in range(files):
                with open(f"big-{i}.bin", "wb") as f:
                    for _ in range(mb_per_file):
                        f.write(b"x" * 2**20)
            return "all written"


        def many(count):
            for i in range(count):
                open(f"small-{i}", "w").close()
            return "all made"


        def used():
            return sum(os.path.getsize(n) for n in os.listdir(".") if n.startswith("big-"))


        def children(count, seconds):
            import subprocess
            started = []
            try:
                for _ in range(count):
                    started.append(subprocess.Popen(["sleep", str(seconds)]))
            except OSError as exc:
                return len(started), type(exc).__name__
            return len(started), "all started"


        def busy(count, marker):
            import os, subprocess
            for _ in range(count):  # busy shells, named by the marker, and busy forks
                subprocess.Popen(["sh", "-c", "while :; do :; done", marker])
                if os.fork() == 0:
                    while True:
                        pass
            while True:
                pass
        """,
}
DISK_MB = 24


def namespaces_only() -> None:
    if isolation.probe()[0] == isolation.PROCESS_GROUP:
        pytest.skip("this machine gives the worker no namespaces")


@pytest.fixture
def filler(tmp_path):
    limits = Limits(test_timeout=30, import_timeout=30, disk_mb=DISK_MB, file_mb=16)
    yield from toy_session(tmp_path, FILLER, limits=limits)


def test_large_files_stop_at_the_disk_quota_with_a_sentence(filler):
    namespaces_only()
    module = filler.module("filler")
    with pytest.raises(LearnerError) as info:
        module.fill(8, 10)  # 80 MiB in files of 8 MiB, each under file_mb
    assert info.value.kind == "disk"
    assert info.value.feedback.startswith("fill(...) could not write a file at ")
    assert f"may write {DISK_MB} MiB to disk in all" in info.value.feedback
    assert module.used() <= DISK_MB * 2**20  # the same worker: it lives on, within its quota
    assert filler.isolation["disk_mb"] == DISK_MB


def test_very_many_small_files_stop_at_the_quota_too(filler):
    namespaces_only()
    with pytest.raises(LearnerError) as info:
        filler.module("filler").many(1_000_000)  # empty files: inodes, not bytes
    assert info.value.kind == "disk"


def test_the_harness_disk_holds_none_of_it(filler):
    namespaces_only()
    module = filler.module("filler")
    with pytest.raises(LearnerError):
        module.fill(8, 10)
    host_copy = filler._channel.worker.root  # the private root as the harness sees it
    written = sum(p.stat().st_size for p in host_copy.rglob("*") if p.is_file())
    assert written < 2**20  # the package's own files only: the quota is the worker's tmpfs


def test_without_namespaces_the_harness_measures_the_folder_after_each_call(tmp_path, monkeypatch):
    """The fallback: rlimits cap each file, and the harness stops a worker whose folder grew
    past the quota (its files are removed with it)."""
    monkeypatch.setattr(isolation, "probe", lambda: (isolation.PROCESS_GROUP, ()))
    limits = Limits(test_timeout=30, import_timeout=30, disk_mb=DISK_MB, file_mb=16)
    for session in toy_session(tmp_path, FILLER, limits=limits):
        module = session.module("filler")
        assert module.used() == 0
        root = session._channel.worker.root
        with pytest.raises(LearnerError) as info:
            module.fill(12, 3)  # 36 MiB: each file within file_mb, together past the quota
        assert info.value.kind == "disk"
        assert info.value.feedback == messages.DISK_OVER.format(call="fill(...)", mb=DISK_MB)
        assert session._channel.worker is None and not root.exists()
        assert module.used() == 0  # a fresh worker, a fresh copy
        with pytest.raises(LearnerError) as many:
            module.many(DISK_MB * 64 + 10)  # more files than the quota allows
        assert many.value.kind == "disk"


def test_a_learner_cannot_start_more_than_a_few_hundred_processes(filler):
    namespaces_only()
    filler.module("filler").used()
    if filler.isolation["uid"] == 0:
        pytest.skip("the worker runs as root here: the kernel does not count its processes")
    started, how = filler.module("filler").children(isolation.MAX_PROCESSES + 50, 30)
    assert how in ("BlockingIOError", "OSError", "PermissionError")
    assert started <= isolation.MAX_PROCESSES


def test_busy_children_count_against_the_time_limit_and_die_with_the_worker(tmp_path):
    namespaces_only()
    limits = Limits(test_timeout=2, import_timeout=30)
    for session in toy_session(tmp_path, FILLER, limits=limits):
        module = session.module("filler")
        module.used()
        pid = session._channel.worker.process.pid
        marker = f"t101-busy-{os.getpid()}-{time.monotonic_ns()}"
        session.begin_test("busy")
        started = time.monotonic()
        with pytest.raises(LearnerError) as info:
            module.busy(4, marker)
        took = time.monotonic() - started
        assert session.end_test().timed_out and info.value.kind == "timeout"
        assert took < 2 * 3 + 5  # the tree's CPU time, not the worker's alone
        assert not os.path.exists(f"/proc/{pid}")
        deadline = time.monotonic() + 10
        while running_with(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert running_with(marker) == {}  # the whole namespace is gone, nobody or not


SLOW_AND_CRASHING = {
    "__init__.py": "",
    "slow.py": """\
        import os
        import time

        time.sleep(SLEEP)


        def boom():
            os._exit(3)


        def hang():
            while True:
                pass


        def fine():
            return 1
        """,
}


def _slow_package(tmp_path: Path, sleep: float) -> dict[str, str]:
    return {name: source.replace("SLEEP", str(sleep)) for name, source in SLOW_AND_CRASHING.items()}


def test_a_function_that_keeps_crashing_is_not_run_again(tmp_path):
    """A module that sleeps at import and a function that exits: each crash costs a fresh
    worker and the import again, so after hang_strikes crashes the function fails at once."""
    limits = Limits(test_timeout=10, import_timeout=30, hang_strikes=2)
    for session in toy_session(tmp_path, _slow_package(tmp_path, 1.0), limits=limits):
        module = session.module("slow")
        kinds = []
        started = time.monotonic()
        for test in range(10):
            session.begin_test(f"test {test}")
            with pytest.raises(LearnerError) as info:
                module.boom()
            session.end_test()
            kinds.append(info.value.feedback)
        took = time.monotonic() - started
        assert kinds[0] == kinds[1] == messages.CRASH_EXIT.format(call="boom(...)", status=3)
        again = messages.NOT_RUN_AFTER_CRASHES.format(call="boom(...)", count=2)
        assert kinds[2:] == [again] * 8
        assert session.generation == 2  # two workers, two imports: not ten
        assert took < 2 * (1.0 + 10)
        assert module.fine() == 1  # the module's other functions still run


def test_the_submission_stops_at_its_wall_budget_with_one_sentence(tmp_path):
    """Workers forked by a zygote, as in grading: their starts are not the learner's time."""
    limits = Limits(test_timeout=2, import_timeout=30, submission_timeout=8, hang_strikes=100)
    with zygote_client.serving():
        _hang_until_the_budget_ends(tmp_path, limits)


def _hang_until_the_budget_ends(tmp_path: Path, limits: Limits) -> None:
    for session in toy_session(tmp_path, _slow_package(tmp_path, 0), limits=limits):
        module = session.module("slow")
        module.fine()
        started = time.monotonic()
        feedback = []
        for test in range(20):  # each would hang for its 2 s budget, 40 s in all
            session.begin_test(f"test {test}")
            try:
                module.hang()
            except LearnerError as error:
                feedback.append(error.feedback)
            assert session.end_test().timed_out
        took = time.monotonic() - started
        assert took < 8 + 5
        cut = messages.SUBMISSION_CUT.format(call="hang(...)", seconds="8")
        spent = messages.SUBMISSION_SPENT.format(call="hang(...)", seconds="8")
        assert cut in feedback and feedback[-1] == spent
        generation = session.generation
        with pytest.raises(LearnerError) as info:
            module.fine()  # no worker started for nothing
        assert info.value.feedback == spent.replace("hang(...)", "fine(...)")
        assert session.generation == generation


@pytest.mark.hostile
def test_at_default_limits_a_sleeping_import_and_a_crash_loop_cost_under_two_minutes(tmp_path):
    """The case that cost seven minutes: a module sleeping 15 s at import, a function that
    exits, called by each of 28 tests. At the course's default limits it now costs the import
    twice and then nothing, far within the submission's budget."""
    package = _slow_package(tmp_path, 15.0)
    for session in toy_session(tmp_path, package, limits=Limits()):
        module = session.module("slow")
        started = time.monotonic()
        for test in range(28):
            session.begin_test(f"test {test}")
            with pytest.raises(LearnerError):
                module.boom()
            session.end_test()
        assert time.monotonic() - started < 120
        assert session.generation == 2


def test_limits_reject_a_zero_quota_or_budget():
    for bad in ({"disk_mb": 0}, {"submission_timeout": 0}):
        with pytest.raises(ValueError, match="must be a positive"):
            Limits(**bad)


def test_a_session_reports_its_quota_and_level(filler):
    filler.module("filler").used()
    assert filler.isolation["level"] == isolation.probe()[0]
    if filler.isolation["level"] != isolation.PROCESS_GROUP:
        assert filler.isolation["disk_mb"] == DISK_MB
