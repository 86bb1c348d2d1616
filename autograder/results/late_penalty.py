"""The late penalty taken from a grade's score, when its graded commit was late.

The late policy (course.toml's [late], gradebook/late.py) says how many days late a learner's
graded commit was; here the grade builder (build.py) takes the penalty: the policy's percent of
max_score per day late, never more than the score itself.
"""

from __future__ import annotations

from dataclasses import replace

from autograder.results.model import GradeResult


def penalised(result: GradeResult) -> GradeResult:
    """The grade with the late penalty taken from its score: ``penalty_per_day`` percent of
    max_score per day late, at most the score; its graded commit's LateDays then holds the
    penalty and the score before it (``raw_total``). Unchanged when the graded commit has no
    LateDays (no --deadline, or no extension and no policy)."""
    graded = result.graded
    late = graded.late if graded is not None else None
    if graded is None or late is None:
        return result
    raw = result.score
    penalty = min(raw, late.days_late * late.penalty_per_day / 100 * result.max_score)
    late = replace(late, penalty=penalty, raw_total=raw)
    return replace(result, score=raw - penalty, graded=replace(graded, late=late))
