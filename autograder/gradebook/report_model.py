"""What the class report shows, as plain rows, and the sentences it says (report.py).

The report's files: MARKDOWN_FILE and HTML_FILE, with FIGURE_FILE (the totals' histogram) and
COMPONENT_FIGURE_FILE (one histogram per component) beside them in DIR.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from autograder.learner_text import clean
from autograder.runtime.shared.messages import NOT_IMPLEMENTED_WORDS

MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
FIGURE_FILE = "score_distribution.png"
COMPONENT_FIGURE_FILE = "component_scores.png"
TOP_FAILURES = 10
WHO_SHOWN = 8  # learner ids named in a row of "Known mistakes" or the common messages
SHOWING = "Showing the {shown} most common of {total} other failure messages."
NOT_IMPLEMENTED_MARK = NOT_IMPLEMENTED_WORDS
NOT_IMPLEMENTED_ROW = "{count} {learners} not implemented {component} yet (or part of it): {who}."
DEADLINE_NOTE = (
    "Graded at the deadline {deadline}: each learner's last commit whose committer time is at "
    "or before it. Learners who also have later commits, which were not graded: {later} (the "
    "gradebook's late column says yes)."
)
DEADLINE_WINDOW_NOTE = (
    "Graded by the deadline {deadline}, each learner's own deadline being it plus their "
    "extension. Learners who also have commits after the last moment graded for them, which "
    "were not graded: {later} (the gradebook's late column says yes)."
)
LATE_NOTE = (
    "Late policy: each learner's last commit up to {max_days} after their own deadline (the "
    "deadline plus their roster's extension_days) is graded and loses {percent}% of the total "
    "points per day started after it. Late: {late}, {points} points taken in all; with an "
    "extension: {extended}."
)
EXTENSION_NOTE = (
    "Extensions: each learner's own deadline is the deadline plus their roster's "
    "extension_days; with an extension: {extended}."
)
GRADED_WHEN = "Graded {when} UTC{how}."
TESTS_RUN = {True: "visible and hidden tests", False: "visible tests only"}
STALE_COPIES = (
    "Graded from the copy fetched before, as it could not be updated this time (each one's "
    "record.json says why): {learners}."
)
UNFINISHED_SHARDS = (
    "Shard {shards} did not finish grading: this gradebook lacks some of its learners (run "
    "that shard's grade-class again, then merge)."
)
SHARD_NOTE = (
    "This folder holds shard {shard} of the roster only; `autograder merge` combines the shard "
    "folders into the class's gradebook."
)
MISSING_SHARDS = (
    "This gradebook holds only {have} of the run's {count} shards; missing: {missing} (merge "
    "every shard folder of the run)."
)
NOT_SUBMITTED = (
    "{title}: graded for the {have} of {graded} graded learners whose repository holds it; "
    "the others have an empty cell in gradebook.csv."
)
NONE = "None."
#: Under "Tamper flags" without --manifest: grade-class compares each learner's copy of the
#: visible tests with yours anyway, but only the manifest names the release's other files.
TAMPER_VISIBLE_ONLY = (
    "Only the visible tests were compared: the class was graded without `--manifest`, so the "
    "release's other protected files were not."
)
#: The same, when no learner changed the visible tests.
TAMPER_NOT_CHECKED = "No learner changed the visible tests. " + TAMPER_VISIBLE_ONLY
REVIEW_HEADING = (
    "Flagged for review (the static check: dynamic reaches, unused library code, a notebook "
    "reaching into the IPython shell; tests that failed inside the graders)"
)
NO_LEARNER = "no learner graded"
NO_FIGURE = "(no figure: no learner graded)"
NO_MATPLOTLIB = (
    "The score figures need matplotlib; install it with `pip install 't101-autograder[report]'`."
)
NO_MESSAGE = "The test failed without a message."
LEARNERS_LINE = (
    "Each learner's score per component and total, as in gradebook.csv; the learner's name "
    "opens their summary.md."
)
LEARNERS_SORT = " Click a column's heading to sort by it."
NOT_GRADED = "error (see the errored learners)"
NOT_GRADED_YET = "not graded yet"
# A parametrized test's name: its description, then " [id]" (pytest_plugin/collection.py).
_PARAMETRIZED = re.compile(r"(.+) \[([^\[\]]+)\]")
#: After the pass-rate table, which lists only the tests some learner failed.
ALL_PASSED_OTHERS = "Every learner counted for them passed the other {tests}."
ALL_PASSED_EVERY = "Every learner counted for them passed {every}."
NOTHING_SUBMITTED = "nothing to grade (see the learners with nothing to grade)"
PASS_RATE_LINE = (
    "Passed: how many of the learners counted for a test passed it. A test counts every graded "
    "learner except those whose every test of its component failed as not implemented yet (a "
    "NotImplementedError, as the stub raises, wherever its test's message says so); the rule is "
    "the same for every component."
)


@dataclass
class Component:
    """A column of the gradebook. optional: graded only when the learner's repository holds
    it (a notebook); absent from the records of the others. ``absent``: the report's sentence
    for those others (formatted with title, have, graded)."""

    name: str
    title: str
    points: float
    optional: bool = False
    absent: str = NOT_SUBMITTED


@dataclass(frozen=True)
class FailureRow:
    """A row of "Known mistakes" or "Most common failure messages": how many learners, the
    component (its title), the catalogued mistake's full id ("" when the message names none),
    the message (for a known mistake, its explanation)."""

    learners: int
    component: str
    mistake: str
    message: str
    who: tuple[str, ...] = ()  # the learners' ids, in gradebook order

    @property
    def who_text(self) -> str:
        return who_text(self.who)


def who_text(learners: tuple[str, ...]) -> str:
    """The first WHO_SHOWN learners' ids, then how many more: 'kim, sam, +3 more'."""
    shown = [clean(who) for who in learners[:WHO_SHOWN]]
    if len(learners) > WHO_SHOWN:
        shown.append(f"+{len(learners) - WHO_SHOWN} more")
    return ", ".join(shown)


@dataclass(frozen=True)
class LearnerRow:
    """One row of the Learners table: each shown component's score ("" when not graded for
    it), the total or why there is none, and the late and similarity cells ("" when they do
    not apply). ``linked``: the learner's folder has a summary.md to link to."""

    learner: str
    scores: tuple[str, ...]
    total: str
    late: str = ""
    extension: str = ""
    days_late: str = ""
    penalty: str = ""
    similarity: str = ""
    linked: bool = False


@dataclass
class ClassReport:
    """Everything the report shows, as plain rows (strings and numbers)."""

    course: str
    learners: int
    graded: int
    totals: list[float]
    max_score: float
    components: list[tuple[str, float, float, int, int]]  # title, mean, points, full, graded
    tests: list[tuple[str, int, int]]  # test name, passed, learners who implemented it
    failures: list[FailureRow]  # the most common messages that name no known mistake
    errored: list[tuple[str, str]]  # learner, error (not graded yet, nothing submitted aside)
    tampered: list[tuple[str, str]]  # learner, files
    figure: bytes = b""
    component_figure: bytes = b""
    notes: list[str] = field(default_factory=list)
    mistakes: list[FailureRow] = field(default_factory=list)  # every known mistake seen
    other_failures: int = 0  # how many distinct other messages (failures shows the first ones)
    # component, the learners (ids in gradebook order) with a not-implemented failure in it
    not_implemented: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    rows: list[LearnerRow] = field(default_factory=list)  # gradebook.csv's order
    # the shown components' titles and points: the Learners table's score columns
    columns: list[tuple[str, float]] = field(default_factory=list)
    # each shown component's scores (title, points, scores): the per-component figure
    scores: list[tuple[str, float, list[float]]] = field(default_factory=list)
    # learner, why: roster learners an interrupted run (or unfinished shard) did not reach
    not_graded_yet: list[tuple[str, str]] = field(default_factory=list)
    # learner, why: no commit, an empty repository, no commit before the deadline
    nothing_submitted: list[tuple[str, str]] = field(default_factory=list)
    # learner, the static check's flags for review (file, line, what)
    review: list[tuple[str, str]] = field(default_factory=list)
    # the similarity check's sentence and page ("" when `autograder similarity` has not run)
    similarity_note: str = ""
    similarity_page: str = ""
    #: whether the class was graded with a manifest, so changed visible tests were looked for
    tamper_checked: bool = True

    @property
    def showing(self) -> str:
        """SHOWING when the other messages were cut, else ""."""
        if self.other_failures <= len(self.failures):
            return ""
        return SHOWING.format(shown=len(self.failures), total=self.other_failures)

    @property
    def tests_failed(self) -> list[tuple[str, int, int]]:
        """The rows of the pass-rate table: the tests some counted learner failed (or that
        counted none), most failed first; those every one passed are said in one sentence."""
        return [(name, p, n) for name, p, n in self.tests if p < n or n == 0]

    @property
    def tests_all_passed(self) -> str:
        """ALL_PASSED for the tests every counted learner passed, "" when there are none."""
        count = len(self.tests) - len(self.tests_failed)
        if not count:
            return ""
        if self.tests_failed:
            return ALL_PASSED_OTHERS.format(tests="test" if count == 1 else f"{count} tests")
        return ALL_PASSED_EVERY.format(every="the one test" if count == 1 else f"all {count} tests")

    def not_implemented_lines(self) -> list[str]:
        return [
            NOT_IMPLEMENTED_ROW.format(
                count=len(who),
                learners="learner has" if len(who) == 1 else "learners have",
                component=c,
                who=who_text(who),
            )
            for c, who in self.not_implemented
        ]

    @property
    def with_deadline(self) -> bool:
        """Whether a row has a late cell (the run had a deadline)."""
        return any(row.late for row in self.rows)

    @property
    def with_late(self) -> bool:
        """Whether a row has the late policy's or an extension's cells."""
        return any(row.days_late for row in self.rows)

    @property
    def with_similarity(self) -> bool:
        return bool(self.similarity_page)


def split_test_name(name: str) -> tuple[str, str]:
    """A test's name as its description and its parametrized id ("" when it has none), so that
    both report formats show every id the same way, as code."""
    match = _PARAMETRIZED.fullmatch(name)
    return (match.group(1), match.group(2)) if match else (name, "")
