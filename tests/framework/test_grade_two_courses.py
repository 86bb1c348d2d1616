"""One process grading two courses in turn: both call their grader package `tests`, so the
second run must not look for its grader files inside the first course's package."""

import sys
from pathlib import Path

from autograder.commands import grade as grade_command

ROOT = Path(__file__).resolve().parents[2]
TOY = Path(__file__).parent / "toy_course"


def _grade(course: Path, submission: Path, out: Path) -> int:
    return grade_command.main(
        submissions=[submission],
        out=out,
        course=course,
        visible_only=True,
        test_timeout=None,
        seed=0,
        quiet=True,
        components=(),
    )


def test_the_toy_course_then_this_course_in_one_process(tmp_path):
    before = sys.modules.get("tests")
    # The toy course's mistaken submission fails some tests (1); so do this course's stubs.
    assert _grade(TOY / "course.toml", TOY / "submissions" / "mistake", tmp_path / "toy") == 1
    assert _grade(ROOT / "course.toml", ROOT / "assignments" / "t101", tmp_path / "t101") == 1
    assert (tmp_path / "t101" / "results.json").is_file()
    assert "could not be collected" not in (tmp_path / "t101" / "grader.log").read_text()
    # The suite's own `tests` package is the one imported again afterwards.
    assert sys.modules.get("tests") is before
