"""A test that fails inside the graders costs the learner its points, so the row says so.

The learner's report says "not your fault, your instructor has been told"; the gradebook's
review column is how the instructor is told, and the row is graded again by the next run
instead of being reused.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder.gradebook import store
from tests.batch.conftest import TOY, run_cli

BROKEN_GRADER = '''

@pytest.mark.scale
def test_scale_grader_bug(learner):
    """a grader with a bug of its own"""
    raise RuntimeError("the expected values table is missing")
'''


def _grade(roster: Path, out: Path, course: Path, cwd: Path):
    return run_cli(
        "grade-class", str(roster), "--out", str(out), "--course", str(course), "-q", cwd=cwd
    )


def test_a_grader_error_is_flagged_for_review_and_regraded(toy_class: dict, tmp_path: Path):
    course = tmp_path / "course"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__", "submissions"))
    with (course / "tests/graders/visible/test_toy_scale.py").open("a") as stream:
        stream.write(BROKEN_GRADER)
    roster = tmp_path / "roster"
    roster.mkdir()
    (roster / "good").symlink_to(toy_class["roster"] / "good")
    out = tmp_path / "out"

    first = _grade(roster, out, course / "course.toml", tmp_path)
    record = store.read_record(out, "good")
    assert record is not None and record.error == "", first.stderr
    flags = [flag for flag in record.review if "failed inside the graders" in flag]
    assert len(flags) == 1, record.review
    assert flags[0].startswith("1 test(s) failed inside the graders, not in the learner's code")
    assert "test_scale_grader_bug: RuntimeError: the expected values table is missing" in flags[0]
    assert record.key == ""
    assert record.total is not None and record.total < record.max_score
    gradebook = (out / "gradebook.csv").read_text()
    assert "failed inside the graders" in gradebook

    graded_at = record.graded_at
    _grade(roster, out, course / "course.toml", tmp_path)
    again = store.read_record(out, "good")
    assert again is not None and again.duration_s > 0
    assert (again.graded_at, again.run_id) != (graded_at, record.run_id)


def test_a_learner_without_grader_errors_has_no_such_flag(toy_class: dict, tmp_path: Path):
    roster = tmp_path / "roster"
    roster.mkdir()
    (roster / "good").symlink_to(toy_class["roster"] / "good")
    out = tmp_path / "out"
    _grade(roster, out, TOY / "course.toml", tmp_path)
    record = store.read_record(out, "good")
    assert record is not None and record.key != ""
    assert not any("failed inside the graders" in flag for flag in record.review)
