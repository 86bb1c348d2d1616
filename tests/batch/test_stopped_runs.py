"""grade-class when a process of the batch is killed: rows a rerun must grade again, a parent
that is dead but not yet collected, and kill -9 of the batch's session process itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.batch.learner_job import NOT_REACHED, PROCESS_DIED, error_record, failed_record
from autograder.batch.processes import process_alive
from autograder.gradebook import store
from autograder.gradebook.resume import reusable as _reusable
from autograder.gradebook.roster import Learner
from autograder.gradebook.settings import JobSettings
from tests.batch.conftest import (
    DEADLINE,
    TOY_COURSE,
    gradebook_without_timing,
    run_cli,
    wait_until_recorded,
)
from tests.processes import session_pid


def _settings(out: Path) -> JobSettings:
    return JobSettings(
        course=TOY_COURSE,
        out=out,
        deadline=None,
        test_timeout=None,
        seed=0,
        run_id="run",
        parent_pid=os.getpid(),
    )


def test_a_row_of_a_killed_process_is_graded_again_by_a_rerun(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    stopped, empty = Learner("stopped", tmp_path / "a"), Learner("empty", tmp_path / "b")
    failed_record(settings, stopped, -9)
    error_record(settings, empty, "The repository is empty.")  # the repository's fault: kept
    record = store.read_record(tmp_path, "stopped")
    assert record is not None and "stopped (exit status -9)" in record.error
    assert not _reusable(record, settings, stopped)
    assert _reusable(store.read_record(tmp_path, "empty"), settings, empty)


def test_a_dead_parent_not_yet_collected_counts_as_gone() -> None:
    assert process_alive(os.getpid())
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        deadline = time.monotonic() + 10
        while process_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.waitpid(pid, os.WNOHANG) == (pid, 0)  # it was a zombie until now
    finally:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    assert not process_alive(pid)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def _one_job_args(toy_class: dict, out: Path) -> list[str]:
    """grade-class of the toy class into out, by the deadline, one job, 2 s a test, quiet."""
    return [
        "grade-class",
        str(toy_class["roster"]),
        "--out",
        str(out),
        "--course",
        str(TOY_COURSE),
        "--deadline",
        DEADLINE,
        "--timeout",
        "2",
        "-q",
        "-j",
        "1",
    ]


def test_kill_9_of_the_session_process_records_stopped_rows_and_resumes(
    toy_class: dict, tmp_path: Path
) -> None:
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    scratch.mkdir()
    args = _one_job_args(toy_class, out)
    process = subprocess.Popen(
        [sys.executable, "-m", "autograder", *args],
        cwd=toy_class["base"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    # Learners go in id order: empty (no grading), then good: kill the session during good.
    wait_until_recorded(process, out)
    session = session_pid(process.pid)
    assert session is not None, "no session process found"
    os.kill(session, signal.SIGKILL)
    _, err = process.communicate(timeout=60)  # the command does not hang
    assert process.returncode == 1, err
    assert "stopped (exit status -9)" in err
    rows = {r.learner: r for r in store.read_records(out)}
    assert sorted(rows) == ["empty", "good", "late", "mistake"]
    # Those the session never began say so; good's child may or may not have begun it.
    assert rows["late"].error == NOT_REACHED.format(learner="late", code=-9)
    assert rows["mistake"].error == NOT_REACHED.format(learner="mistake", code=-9)
    assert rows["good"].error in (
        PROCESS_DIED.format(learner="good", code=-9),
        NOT_REACHED.format(learner="good", code=-9),
    )
    stopped = sorted(name for name, row in rows.items() if "stopped" in row.error)
    time.sleep(1.5)  # an orphaned learner's child notices within a second; it commits nothing
    after = {r.learner: r for r in store.read_records(out)}
    assert sorted(name for name, row in after.items() if "stopped" in row.error) == stopped
    assert [p.name for p in scratch.iterdir() if not p.name.startswith("pymp-")] == []

    done = run_cli(*args, cwd=toy_class["base"])
    assert done.returncode == 1, done.stderr
    again = {r.learner: r for r in store.read_records(out)}
    assert not again["good"].error and again["good"].total == 15.0
    assert again["empty"].run_id == rows["empty"].run_id  # the repository's own error: kept
    whole = toy_class["base"] / "stopped-whole"
    run_cli(*[a if a != str(out) else str(whole) for a in args], cwd=toy_class["base"])
    assert gradebook_without_timing(out / "gradebook.csv") == gradebook_without_timing(
        whole / "gradebook.csv"
    )


def test_kill_9_of_an_unreaped_command_leaves_no_folder_and_no_grade_made_while_dying(
    toy_class: dict, tmp_path: Path
) -> None:
    """The command is killed while its caller still reads its pipes (subprocess.run reaps only
    then): its session process and children must see it gone all the same, commit no grade
    whose workers died with it, and leave nothing in TMPDIR, multiprocessing's folder too."""
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    scratch.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "autograder", "grade-class", str(toy_class["roster"])]
        + ["--out", str(out), "--course", str(TOY_COURSE), "--deadline", DEADLINE, "-q"]
        + ["-j", "1", "--timeout", "2"],
        cwd=toy_class["base"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    wait_until_recorded(process, out)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)  # every descendant has closed the pipes by now
    assert sorted(p.name for p in scratch.iterdir()) == []
    for record in store.read_records(out):
        assert record.error or record.total == {"good": 15.0, "mistake": 10.0}[record.learner]
