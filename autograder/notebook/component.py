"""Adding the notebook component to a submission's GradeResult (the points rule of results.py).

The component's points are the sum of its autograded cells' points; a test's share is
`points * weight / sum of weights`, all or nothing, so each cell is worth its nbgrader points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

from autograder.notebook.course import NotebookAssignment
from autograder.reports.sanitize import first_sentence
from autograder.results import ComponentResult, GradeResult, TestResult


def with_notebook(
    result: GradeResult,
    assignment: NotebookAssignment,
    tests: list[TestResult],
    grader_errors: Sequence[str] = (),
) -> GradeResult:
    """result with the notebook's tests and component appended and the totals updated."""
    value = Fraction(assignment.points)
    weights = sum((Fraction(t.weight) for t in tests), Fraction(0))
    scored, score = [], Fraction(0)
    for test in tests:
        share = value * Fraction(test.weight) / weights if weights else Fraction(0)
        gained = share if test.passed else Fraction(0)
        score += gained
        scored.append(replace(test, score=float(gained), max_score=float(share)))
    failing = [t for t in tests if not t.passed]
    component = ComponentResult(
        name=assignment.component,
        title=assignment.title,
        score=float(score),
        max_score=float(value),
        passed=len(tests) - len(failing),
        total=len(tests),
        problem=first_sentence(failing[0].message) if failing else "",
    )
    total = Fraction(result.score).limit_denominator(10**9) + score
    return replace(
        result,
        tests=[*result.tests, *scored],
        components=[*result.components, component],
        score=float(total),
        max_score=float(Fraction(result.max_score).limit_denominator(10**9) + value),
        grader_errors=[*result.grader_errors, *grader_errors],
    )
