"""What a grade is: the typed, immutable results of grading one submission.

TestResult (one grader test), ComponentResult (one component's share), ForbiddenUse (a
forbidden call and its sentence), NestedCall (one made inside another forbidden API),
GradeResult (the whole submission) and Ungraded (a submission that could not be graded, with
the sentence saying why). Scores are computed in points_rule.py; every report renders from a
GradeResult.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from autograder.learner_text import clean
from autograder.points_text import points
from autograder.results.commit import GradedCommit

PRINTED = "Your code printed:"
SUMMARY_TOTAL = "Total: {score} / {max_score}."
#: Before each review flag in the learner's summary (the flag itself costs no points; a
#: notebook's reach into the IPython shell has already failed its tests).
REVIEW_LINE = "Flagged for your instructor's review:"
SUMMARY_GRADER_ERRORS = (
    "{count} grader error(s) happened while grading; they are not your fault and your "
    "instructor has been told."
)

Status = Literal["passed", "failed"]


@dataclass(frozen=True)
class TestResult:
    """One grader test, as run against one submission."""

    __test__ = False  # not a pytest test class

    name: str
    nodeid: str
    component: str
    weight: float = 1.0
    score: float = 0.0
    max_score: float = 0.0
    status: Status = "failed"
    message: str = ""
    visibility: Literal["visible", "hidden"] = "visible"
    duration: float = 0.0
    output: str = ""
    error_kind: str = ""
    #: The components (depends_on) whose learner code the test ran (its `uses` marker, less
    #: those a stand-in replaced); None when the test does not say (results/dependencies.py).
    uses: tuple[str, ...] | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class ComponentResult:
    """One component's share of the grade."""

    name: str
    title: str
    score: float
    max_score: float
    passed: int
    total: int
    forbidden: tuple[str, ...] = ()  # the forbidden sentences that zeroed it
    #: the first thing to fix: a catalogued mistake's sentence, else the first failure's first
    #: sentence, each with the later one naming its file and line (learner_text.with_place);
    #: "" when full marks
    problem: str = ""
    fix_first: tuple[str, ...] = ()  # failing components it builds on
    note: str = ""  # FIX_FIRST for them, which `problem` ends with ("" when none)


@dataclass(frozen=True)
class ForbiddenUse:
    """A forbidden API called from a learner file (component "" when no component owns it)."""

    api: str
    file: str
    line: int
    component: str
    sentence: str


@dataclass(frozen=True)
class NestedCall:
    """A forbidden call the worker saw made by the code of another forbidden API, ``within``
    (``F.multi_head_attention_forward`` inside ``nn.MultiheadAttention.forward``), charged to
    ``component`` (the one whose test made it; "" when no test ran: the file's). The points rule
    tells it only when no use of ``within`` is told in that component."""

    api: str
    file: str
    line: int
    within: str
    component: str = ""


@dataclass(frozen=True)
class ReviewFlag:
    """Something in the learner's source the instructor should look at (static_check): a
    dynamic reach the check cannot follow, or a library implementation in code that no graded
    part calls. It costs no points."""

    file: str  # relative to the package folder
    line: int
    what: str  # the spelling found
    sentence: str  # "assignments/t101/x.py line 3: ..." for the learner and the gradebook


@dataclass(frozen=True)
class GradeResult:
    """A whole submission's grade, built once (build.py) and never changed afterwards."""

    submission: str
    course: str
    tests: tuple[TestResult, ...]
    components: tuple[ComponentResult, ...]
    score: float
    max_score: float
    hidden_included: bool
    seed: int
    forbidden: tuple[ForbiddenUse, ...] = ()
    grader_errors: tuple[str, ...] = ()
    duration: float = 0.0
    started_at: str = ""
    hidden_visibility: str = "after_due_date"
    #: Protected files (release manifest) that differ: {"path", "expected", "got", "sentence"}.
    protected_changes: tuple[dict[str, str], ...] = ()
    #: The commit a batch graded (grade-class); None for a folder graded as it is.
    graded: GradedCommit | None = None
    #: Seconds of learner code allowed per test (--timeout, else course.toml's); None: unknown
    test_timeout: float | None = None
    #: What the static check flags for the instructor's review (static_check.ReviewFlag)
    review: tuple[ReviewFlag, ...] = ()
    #: Sentences every report shows after the components (a part graded by hand, pending).
    notes: tuple[str, ...] = ()
    #: More results.json extra_data entries, by key (the notebook's: "notebook").
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def all_passed(self) -> bool:
        """Full marks: every test passed and nothing was zeroed."""
        return (
            all(t.passed for t in self.tests)
            and all(c.passed == c.total > 0 for c in self.components)
            and not self.grader_errors
        )

    def summary_text(self) -> str:
        """A few plain lines: the total, then one line per component."""
        lines = [SUMMARY_TOTAL.format(score=points(self.score), max_score=points(self.max_score))]
        if self.graded is not None:
            lines.append(self.graded.sentence())
        for c in self.components:
            line = f"{c.title}: {points(c.score)} / {points(c.max_score)}"
            lines.append(f"{line} ({clean(c.problem)})" if c.problem else line)
        lines += [clean(note) for note in self.notes]
        if self.grader_errors:
            lines.append(SUMMARY_GRADER_ERRORS.format(count=len(self.grader_errors)))
        lines += [f"{REVIEW_LINE} {clean(flag.sentence)}" for flag in self.review]
        return "\n".join(lines)

    def _duration(self) -> dict[str, float]:
        """results.json's ``duration``, only when no hidden test ran: learner code can sleep in
        a hidden test for as long as an input's value says, and a learner gets results.json
        (the gradebook keeps every run's time for the instructor)."""
        if any(test.visibility == "hidden" for test in self.tests):
            return {}
        return {"duration": round(self.duration, 3)}

    def to_gradescope(self) -> dict[str, Any]:
        """The Gradescope results.json document."""
        titles = {c.name: c.title for c in self.components}
        numbers = {c.name: index for index, c in enumerate(self.components, start=1)}
        counters: dict[str, int] = {}
        tests = []
        for test in self.tests:
            counters[test.component] = counters.get(test.component, 0) + 1
            output = clean(test.message)
            if test.output and test.visibility == "visible":
                output = f"{output}\n\n{PRINTED}\n{clean(test.output)}".strip()
            tests.append(
                {
                    "name": f"{titles.get(test.component, test.component)}: {test.name}",
                    "score": test.score,
                    "max_score": test.max_score,
                    "status": test.status,
                    "output": output,
                    "visibility": "visible"
                    if test.visibility == "visible"
                    else self.hidden_visibility,
                    "tags": [test.component],
                    "number": f"{numbers.get(test.component, 0)}.{counters[test.component]}",
                }
            )
        return {
            "score": self.score,
            "max_score": self.max_score,
            "output": self.summary_text(),
            "tests": tests,
            "extra_data": {
                "submission": self.submission,
                "course": self.course,
                "seed": self.seed,
                "hidden_included": self.hidden_included,
                "forbidden": [vars(use) for use in self.forbidden],
                "grader_errors": list(self.grader_errors),
                "started_at": self.started_at,
                "protected_files_changed": list(self.protected_changes),
                "graded_commit": asdict(self.graded) if self.graded else None,
                "test_timeout_s": self.test_timeout,
                "review": [vars(flag) for flag in self.review],
                **self._duration(),
                **dict(self.extra),
            },
        }


@dataclass(frozen=True)
class Ungraded:
    """A submission that could not be graded, with the one sentence saying why."""

    submission: str
    reason: str
