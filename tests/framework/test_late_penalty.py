"""The late penalty is taken where scores are computed (results/late_penalty.py)."""

from __future__ import annotations

import pytest

from autograder.gradebook.late import LateDays
from autograder.results import GradedCommit, GradeResult
from autograder.results.late_penalty import penalised


def _grade(score: float, late: LateDays | None, *, graded: bool = True) -> GradeResult:
    commit = GradedCommit("abc123", "2026-12-03T10:00:00+00:00", "2026-12-01", late=late)
    return GradeResult(
        submission="amy",
        course="T101",
        tests=(),
        components=(),
        score=score,
        max_score=100.0,
        hidden_included=True,
        seed=0,
        graded=commit if graded else None,
    )


def _late(days: int) -> LateDays:
    return LateDays(
        deadline="2026-12-01T00:00:00+00:00",
        class_deadline="2026-12-01",
        extension_days=0,
        days_late=days,
        penalty_per_day=10.0,
        max_days=5,
    )


@pytest.mark.parametrize(
    ("days", "score", "after", "penalty"), [(2, 50.0, 30.0, 20.0), (0, 50.0, 50.0, 0.0)]
)
def test_each_day_late_takes_the_policys_percent_of_the_total_points(
    days, score, after, penalty
) -> None:
    result = penalised(_grade(score, _late(days)))
    assert result.score == pytest.approx(after)
    assert result.graded.late.penalty == pytest.approx(penalty)
    assert result.graded.late.raw_total == score


def test_the_penalty_never_takes_more_than_the_learner_scored() -> None:
    result = penalised(_grade(15.0, _late(3)))
    assert (result.score, result.graded.late.penalty, result.graded.late.raw_total) == (
        0.0,
        15.0,
        15.0,
    )


@pytest.mark.parametrize("graded", [True, False])
def test_a_grade_without_late_days_is_unchanged(graded) -> None:
    grade = _grade(42.0, None, graded=graded)
    assert penalised(grade) is grade
