"""grade-class with graders that cannot run: every learner's row says why, the exit status is 1,
stderr holds sentences and no traceback, and DIR/.session.log keeps pytest's own account."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.batch.session_process import SESSION_LOG_HEADER
from autograder.gradebook import store
from tests.batch.conftest import TOY, run_cli

VISIBLE = Path("tests/graders/visible")
HIDDEN = Path("tests/graders/hidden")


def _no_tests(course: Path) -> None:
    for folder in (VISIBLE, HIDDEN):
        for test in (course / folder).glob("test_*.py"):
            test.unlink()


def _syntax_error(course: Path) -> None:
    with (course / VISIBLE / "test_toy_scale.py").open("a") as stream:
        stream.write("\ndef test_broken(:\n")


def _no_marker(course: Path) -> None:
    with (course / VISIBLE / "test_toy_scale.py").open("a") as stream:
        stream.write("\ndef test_unmarked(learner):\n    pass\n")


@pytest.mark.parametrize(
    ("breaks", "sentence"),
    [
        (_no_tests, "No grader tests were collected from "),
        (_syntax_error, "test_toy_scale.py could not be collected: SyntaxError"),
        (_no_marker, "test_unmarked carries no component marker"),
    ],
    ids=["no-tests", "syntax-error", "no-marker"],
)
def test_every_row_says_why_the_graders_could_not_run(
    toy_class: dict, tmp_path: Path, breaks, sentence: str
) -> None:
    course = tmp_path / "course"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__", "submissions"))
    breaks(course)
    roster = tmp_path / "roster"
    roster.mkdir()
    (roster / "good").symlink_to(toy_class["roster"] / "good")
    out = tmp_path / "out"
    done = run_cli(
        "grade-class", str(roster), "--out", str(out), "--course", str(course / "course.toml"),
        "-q", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    record = store.read_record(out, "good")
    assert record is not None and sentence in record.error
    assert record.total is None and record.components == {}
    assert f"good: {record.error}" in done.stderr
    # The log says first what it is: its pytest header names the course as the submission.
    log = (out / ".session.log").read_text(encoding="utf-8")
    assert log.startswith(SESSION_LOG_HEADER.format(out=out.resolve()))
    assert "each learner's tests and results are in" in log.splitlines()[0]


def test_a_session_that_fails_before_grading_says_why_in_every_row(
    toy_class: dict, tmp_path: Path
) -> None:
    roster = tmp_path / "roster"
    roster.mkdir()
    (roster / "good").symlink_to(toy_class["roster"] / "good")
    out = tmp_path / "out"
    (out / ".session.log").mkdir(parents=True)  # the session cannot write its log
    done = run_cli(
        "grade-class", str(roster), "--out", str(out), "--course", str(TOY / "course.toml"),
        "-q", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    record = store.read_record(out, "good")
    assert record is not None
    assert record.error.startswith("The grading session failed before it graded anyone ")
    assert "IsADirectoryError" in record.error
