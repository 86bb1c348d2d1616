"""The one grade builder: everything a submission's grade is made of, into one GradeResult.

`build_grade` takes what grading found (the tests' outcomes and forbidden calls, the graded
notebook parts, the changed protected files, the commit) and returns the submission's
GradeResult, frozen, with the late policy's penalty taken when the graded commit was late
(late_penalty.py): every report (grader.log's points, results.json, summary.md, junit.xml,
the terminal table, the gradebook row) renders from it and nothing changes it afterwards.
The module components are scored by the points rule (points_rule.py); a notebook part's points
are the sum of its autograded cells' points, each cell's share `points * weight / sum of
weights`, all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from autograder.config import CourseConfig
from autograder.learner_text import first_sentence_and_place
from autograder.results.commit import GradedCommit
from autograder.results.late_penalty import penalised
from autograder.results.model import ComponentResult, GradeResult, ReviewFlag, TestResult
from autograder.results.points_rule import Record, score_modules


@dataclass(frozen=True)
class NotebookPart:
    """A graded notebook assignment: its component, title and points, its cells as tests."""

    component: str
    title: str
    points: float
    tests: tuple[TestResult, ...]
    grader_errors: tuple[str, ...] = ()
    #: Sentences for every report (its cells graded by hand, pending; cells put back)
    notes: tuple[str, ...] = ()
    #: Its results.json extra_data entry, under the component's name
    extra: dict[str, Any] | None = None
    #: Seconds its grading took, counted in the grade's duration
    duration: float = 0.0
    #: Its flags for the instructor's review (reaches into the IPython shell), joining the grade's
    review: tuple[ReviewFlag, ...] = ()


def build_grade(
    config: CourseConfig,
    tests: Iterable[TestResult],
    *,
    submission: str,
    seed: int,
    hidden_included: bool,
    forbidden: Iterable[Record] = (),
    grader_errors: Iterable[str] = (),
    duration: float = 0.0,
    started_at: str = "",
    notebooks: Sequence[NotebookPart] = (),
    protected_changes: Sequence[dict[str, str]] = (),
    graded: GradedCommit | None = None,
    test_timeout: float | None = None,
    review: Iterable[ReviewFlag] = (),
    chosen: Sequence[str] = (),
) -> GradeResult:
    """A submission's grade. ``tests``: the grader tests that ran; ``forbidden``: (api, file,
    line[, component]) records of forbidden calls; ``notebooks``: the graded notebook parts
    (components after the course's; their notes, extra_data entries and time join the grade's);
    ``protected_changes``: protected files that differ from the release manifest; ``graded``:
    the commit a batch graded; ``test_timeout``: seconds of learner code per test (None:
    course.toml's); ``review``: the static check's flags for the instructor, which cost no
    points; ``chosen``: the components the run asked for (--component; () for all)."""
    modules = score_modules(config, tests, forbidden, chosen)
    scored, components = list(modules.tests), list(modules.components)
    total, total_max = modules.score, modules.max_score
    errors = list(grader_errors)
    review = [*review, *(flag for part in notebooks for flag in part.review)]
    for part in notebooks:
        part_tests, component, score = _score_notebook(part)
        scored += part_tests
        components.append(component)
        total += score
        total_max += Fraction(part.points)
        errors += part.grader_errors
    result = GradeResult(
        submission=submission,
        course=config.course.name,
        tests=tuple(scored),
        components=tuple(components),
        score=float(total),
        max_score=float(total_max),
        hidden_included=hidden_included,
        seed=seed,
        forbidden=modules.forbidden,
        grader_errors=tuple(errors),
        duration=duration + sum(part.duration for part in notebooks),
        started_at=started_at,
        hidden_visibility=config.course.hidden_visibility,
        protected_changes=tuple(protected_changes),
        graded=graded,
        test_timeout=test_timeout or config.limits.test_timeout,
        review=tuple(sorted(set(review), key=lambda flag: (flag.file, flag.line, flag.what))),
        notes=tuple(note for part in notebooks for note in part.notes),
        extra=tuple((p.component, p.extra) for p in notebooks if p.extra is not None),
    )
    return penalised(result)  # the late policy's penalty, when the graded commit was late


def _score_notebook(part: NotebookPart) -> tuple[list[TestResult], ComponentResult, Fraction]:
    """A notebook part's cells scored, its component and its exact score."""
    value = Fraction(part.points)
    weights = sum((Fraction(t.weight) for t in part.tests), Fraction(0))
    scored, score = [], Fraction(0)
    for test in part.tests:
        share = value * Fraction(test.weight) / weights if weights else Fraction(0)
        gained = share if test.passed else Fraction(0)
        score += gained
        scored.append(replace(test, score=float(gained), max_score=float(share)))
    failing = [t for t in part.tests if not t.passed]
    component = ComponentResult(
        name=part.component,
        title=part.title,
        score=float(score),
        max_score=float(value),
        passed=len(part.tests) - len(failing),
        total=len(part.tests),
        problem=first_sentence_and_place(failing[0].message) if failing else "",
    )
    return scored, component, score
