"""Typed grading results and the points rule.

The points rule (docs/architecture.md):

* A component's points (course.toml) are split over its tests that ran, by weight
  (`@pytest.mark.weight(n)`, default 1): a test is worth `points * weight / sum of the weights
  of that component's tests that ran`, all or nothing.
* A component whose own module file called a forbidden API scores zero, whatever its tests
  said; every one of its tests carries the forbidden sentence. A call from a learner file no
  component owns (a helper module, or code that named no file of the package as its own) is
  charged to the component whose test was running: the record then carries that component,
  (api, file, line, component).
* A component none of whose tests ran scores zero out of its points.
* Totals are exact sums (computed with fractions); only display rounds, to 2 decimals.

A failing test's message starts with a capital letter (capitalised): results.json, summary.md
and the terminal show the same sentence.

Dependencies (course.toml `depends_on`): when a component has failing tests and so does a
component it builds on, FIX_FIRST follows its first problem and ends each of its failing tests'
messages, so that the learner fixes the part underneath first. The component's own problem
always comes first (the terminal table, summary.md and results.json give the same order). A
test that failed because the component's own code is not implemented (NotImplementedError
raised outside the parts' module files), or whose message names a known mistake of the
component itself, does not involve those parts and gets no note; a
component none of whose failing tests involves them gets none either, nor does a component
zeroed for its own forbidden call (that problem is its own).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

from autograder.config import CourseConfig
from autograder.mistakes.catalogue import named_mistake
from autograder.reports.sanitize import clean, first_sentence

FORBIDDEN_AT = "{sentence} It was called in {file} at line {line}."
#: Line 0: the call came from learner code compiled under another file's name (guard.py).
FORBIDDEN_DISGUISED = (
    "{sentence} It was called by code of {file} that was compiled under another file's name."
)
#: ... and the object called came from no file of the package either (guard.UNKNOWN_FILE).
FORBIDDEN_NO_FILE = "{sentence} It was called by learner code compiled under another file's name."
NO_TESTS_RAN = "No test of this component ran, so it scores zero."
FIX_FIRST = "Fix {parts} first: this part builds on {them}, and {their} own tests fail."
PRINTED = "Your code printed:"
SUMMARY_TOTAL = "Total: {score} / {max_score}."
GRADED_COMMIT = "Graded commit {commit} (committed {time})"
GRADED_AT_DEADLINE = ", the last one at or before the deadline {deadline}"
LATER_NOT_GRADED = "; your later commits were not graded."
#: The same with their number and the last one's time (committer time, as the deadline's).
LATER_COUNTED = (
    "; your {count} later {commits} (by committer time, the last at {last}) {were} not graded."
)
LEFT_OUT = " Left out of your commit, so not graded: {entries}."
LEFT_OUT_SHOWN = 5  # entries named; then how many more
LEFT_OUT_KEPT = 100  # entries kept in results.json (extra_data.graded_commit.left_out)
STALE_COPY = (
    " Your repository could not be fetched again for this grading run, so this is the grade of "
    "the copy fetched before: commits pushed since then are not in it."
)
SUMMARY_GRADER_ERRORS = (
    "{count} grader error(s) happened while grading; they are not your fault and your "
    "instructor has been told."
)

Status = Literal["passed", "failed"]
THE_CALL = "The call {message}"
_CODE_FIRST = re.compile(r"[A-Za-z_][\w.]*[(\[]")


def capitalised(message: str) -> str:
    """A learner-facing message that starts with a capital letter: a leading lowercase word is
    capitalised ("the gradient of" -> "The gradient of"); a leading call, which must keep its
    spelling, gets THE_CALL in front ("The call softmax(...) is not implemented yet")."""
    if not message or not message[0].islower():
        return message
    if _CODE_FIRST.match(message) or "_" in message.split(" ", 1)[0]:
        return THE_CALL.format(message=message)
    return message[0].upper() + message[1:]


def points(value: float) -> str:
    """A score as displayed: two decimals."""
    return f"{value:.2f}"


@dataclass
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

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass
class ComponentResult:
    """One component's share of the grade."""

    name: str
    title: str
    score: float
    max_score: float
    passed: int
    total: int
    forbidden: list[str] = field(default_factory=list)
    problem: str = ""  # the first thing to fix, one sentence ("" when full marks)
    fix_first: list[str] = field(default_factory=list)  # failing components it builds on
    note: str = ""  # FIX_FIRST for them, which `problem` ends with ("" when none)


@dataclass(frozen=True)
class ForbiddenUse:
    """A forbidden API called from a learner file (component "" when no component owns it)."""

    api: str
    file: str
    line: int
    component: str
    sentence: str


def left_out_entries(left_out: Sequence[tuple[str, str]], more: int = 0) -> str:
    """'path (why); ...; and N more': the first LEFT_OUT_SHOWN of (path, why) entries that an
    export left out, and how many more (``more``: those not even in the list)."""
    shown = [f"{path} ({why})" for path, why in left_out[:LEFT_OUT_SHOWN]]
    more += len(left_out) - len(shown)
    if more:
        shown.append(f"and {more} more")
    return "; ".join(shown)


@dataclass(frozen=True)
class GradedCommit:
    """Which commit of a learner's repository a batch graded (gradebook/snapshot.py):
    ``commit_time`` ISO 8601 (UTC), ``deadline`` as given ("" without), ``later``: commits
    after the deadline exist (None without a deadline); ``stale``: the repository could not be
    fetched again, and a copy fetched by an earlier run was graded (gradebook/fetch.py);
    ``left_out``: (path, why) of the commit's entries that were not exported
    (gradebook/snapshot.py: symbolic links, names too long), at most LEFT_OUT_KEPT of them,
    and ``left_out_more`` how many more there were; ``later_count`` and ``last_time``: how
    many commits came after the deadline and the committer time of the last (0 and "" in the
    records of versions before them)."""

    commit: str
    commit_time: str
    deadline: str = ""
    later: bool | None = None
    stale: bool = False
    left_out: tuple[tuple[str, str], ...] = ()
    left_out_more: int = 0
    later_count: int = 0
    last_time: str = ""

    def sentence(self) -> str:
        """What the learner's reports say of the commit graded (one or two sentences)."""
        said = GRADED_COMMIT.format(commit=self.commit[:12], time=self.commit_time)
        if not self.deadline:
            said += "."
        else:
            said += GRADED_AT_DEADLINE.format(deadline=self.deadline)
            said += self._later() if self.later else "."
        if self.left_out:
            said += LEFT_OUT.format(entries=left_out_entries(self.left_out, self.left_out_more))
        return said + (STALE_COPY if self.stale else "")

    def _later(self) -> str:
        if not (self.later_count and self.last_time):  # a record of a version before them
            return LATER_NOT_GRADED
        one = self.later_count == 1
        return LATER_COUNTED.format(
            count="1" if one else self.later_count,
            commits="commit" if one else "commits",
            last=self.last_time,
            were="was" if one else "were",
        )


@dataclass
class GradeResult:
    """A whole submission's grade."""

    submission: str
    course: str
    tests: list[TestResult]
    components: list[ComponentResult]
    score: float
    max_score: float
    hidden_included: bool
    seed: int
    forbidden: list[ForbiddenUse] = field(default_factory=list)
    grader_errors: list[str] = field(default_factory=list)
    duration: float = 0.0
    started_at: str = ""
    hidden_visibility: str = "after_due_date"
    #: Protected files (release manifest) that differ: {"path", "expected", "got", "sentence"}.
    protected_changes: list[dict[str, str]] = field(default_factory=list)
    #: The commit a batch graded (grade-class); None for a folder graded as it is.
    graded: GradedCommit | None = None
    #: Seconds of learner code allowed per test (--timeout, else course.toml's); None: unknown
    test_timeout: float | None = None

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
        if self.grader_errors:
            lines.append(SUMMARY_GRADER_ERRORS.format(count=len(self.grader_errors)))
        return "\n".join(lines)

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
                "duration": round(self.duration, 3),
                "started_at": self.started_at,
                "protected_files_changed": list(self.protected_changes),
                "graded_commit": vars(self.graded) if self.graded else None,
                "test_timeout_s": self.test_timeout,
            },
        }


def fix_first_sentence(titles: list[str]) -> str:
    """FIX_FIRST for the titles of the failing components a component builds on."""
    if len(titles) == 1:
        return FIX_FIRST.format(parts=titles[0], them="it", their="its")
    parts = f"{', '.join(titles[:-1])} and {titles[-1]}"
    return FIX_FIRST.format(parts=parts, them="them", their="their")


def _note_dependencies(
    config: CourseConfig, components: list[ComponentResult], tests: list[TestResult]
) -> list[TestResult]:
    """Add FIX_FIRST after the problem of each failing component whose dependencies also fail
    (see the module docstring); return the tests with the note added to the failing ones'
    messages that may involve those dependencies."""
    by_name = {c.name: c for c in components}
    files = {c.name: c.module_file for c in config.components}
    failing = {c.name for c in components if c.total and c.passed < c.total}
    noted: dict[str, tuple[str, list[str]]] = {}  # component -> (note, its parts' files)
    for component in config.components:
        result = by_name[component.name]
        blocked = [d for d in component.depends_on if d in failing and d != component.name]
        if component.name not in failing or result.forbidden or not blocked:
            continue
        parts = [files[d] for d in blocked]
        own = [t for t in tests if t.component == component.name and not t.passed]
        if not any(_involves(t, parts) for t in own):
            continue  # its own code is not implemented yet: that comes first, alone
        note = fix_first_sentence([by_name[d].title for d in blocked])
        result.fix_first, result.note = blocked, note
        result.problem = f"{result.problem} {note}".strip()
        noted[component.name] = (note, parts)
    out = []
    for t in tests:
        note, parts = noted.get(t.component, ("", []))
        if note and not t.passed and _involves(t, parts):
            t = replace(t, message=f"{t.message} {note}".strip())
        out.append(t)
    return out


def _involves(test: TestResult, part_files: list[str]) -> bool:
    """Whether a failing test may have failed because of a part its component builds on: not
    when the component's own code raised NotImplementedError (the error's location is none of
    the parts' module files, e.g. `attention.py`, not `softmax.py`), nor when the message names
    a known mistake of the component itself (`[attention/no-scale]`: the graders matched the
    result to that mistake made on top of correct parts)."""
    named = named_mistake(test.message)
    if named is not None and named.startswith(f"[{test.component}/"):
        return False
    if test.error_kind != "not_implemented":
        return True
    return any(f"/{file}" in test.message for file in part_files)


def forbidden_uses(
    config: CourseConfig, records: Iterable[tuple[str, str, int] | tuple[str, str, int, str]]
) -> list[ForbiddenUse]:
    """(api, file, line) records from the worker, deduplicated, each with its component: the
    one whose module is the file, else the one a 4-tuple (api, file, line, component) names."""
    records = set(records)
    charged = {record[:3] for record in records if len(record) == 4}
    uses = []
    for record in sorted(records):
        api, file, line = record[:3]
        if len(record) == 3 and record in charged:
            continue  # the same call, charged to the component whose test made it
        owner = config.component_for_file(file)
        component = owner.name if owner else (record[3] if len(record) == 4 else "")
        at = (
            FORBIDDEN_AT
            if line
            else FORBIDDEN_NO_FILE
            if file.startswith("<")
            else FORBIDDEN_DISGUISED
        )
        shown = f"{config.course.package_dir.as_posix()}/{file}"  # as the learner's repo names it
        sentence = at.format(sentence=config.forbidden.sentence(api), file=shown, line=line)
        uses.append(ForbiddenUse(api, file, int(line), component, sentence))
    return uses


def build_grade_result(
    config: CourseConfig,
    tests: Iterable[TestResult],
    *,
    submission: str,
    seed: int,
    hidden_included: bool,
    forbidden: Iterable[tuple[str, str, int] | tuple[str, str, int, str]] = (),
    grader_errors: Iterable[str] = (),
    duration: float = 0.0,
    started_at: str = "",
) -> GradeResult:
    """Apply the points rule to the tests that ran and total the grade."""
    uses = forbidden_uses(config, forbidden)
    by_component: dict[str, list[TestResult]] = {c.name: [] for c in config.components}
    for test in tests:
        by_component.setdefault(test.component, []).append(test)

    scored: list[TestResult] = []
    components: list[ComponentResult] = []
    total, total_max = Fraction(0), Fraction(0)
    for component in config.components:
        own = by_component[component.name]
        zeroed = [u.sentence for u in uses if u.component == component.name]
        weights = sum(Fraction(t.weight) for t in own)
        value = Fraction(component.points)
        score = Fraction(0)
        for test in own:
            share = value * Fraction(test.weight) / weights
            if not test.passed:
                test = replace(test, message=capitalised(test.message))
            if zeroed:
                # Keep a failure's own sentence unless it is the runtime's forbidden one again.
                own_failure = not test.passed and test.error_kind != "forbidden"
                message = " ".join([zeroed[0], *([test.message] if own_failure else [])])
                test = replace(test, status="failed", message=message, error_kind="forbidden")
            gained = share if test.passed else Fraction(0)
            score += gained
            scored.append(replace(test, score=float(gained), max_score=float(share)))
        failing = [replace(t, message=capitalised(t.message)) for t in own if not t.passed]
        problem = zeroed[0] if zeroed else ""
        if not own:
            problem = NO_TESTS_RAN
        elif not problem and failing:
            # A catalogued mistake, named by any failing test, says more than the first failure.
            named = (named_mistake(t.message) for t in failing)
            problem = next((n for n in named if n), None) or first_sentence(failing[0].message)
        components.append(
            ComponentResult(
                name=component.name,
                title=component.title,
                score=float(score),
                max_score=float(value),
                passed=0 if zeroed else len(own) - len(failing),
                total=len(own),
                forbidden=zeroed,
                problem=problem,
            )
        )
        total += score
        total_max += value
    scored = _note_dependencies(config, components, scored)
    return GradeResult(
        submission=submission,
        course=config.course.name,
        tests=scored,
        components=components,
        score=float(total),
        max_score=float(total_max),
        hidden_included=hidden_included,
        seed=seed,
        forbidden=uses,
        grader_errors=list(grader_errors),
        duration=duration,
        started_at=started_at,
        hidden_visibility=config.course.hidden_visibility,
    )
