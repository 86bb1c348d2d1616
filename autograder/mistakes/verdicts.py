"""Judging one `autograder check` case from its grade (cases.py says what each case expects).

A graded case leaves, in the batch output folder, DIR/<key>/record.json (component scores, or
the error sentence) and DIR/<key>/results.json (every test's status, component and message).
`read_outcome` turns them into an Outcome; `judge` compares it with the case's expectation and
returns a Row: the table's cells and, when the case fails, a sentence saying why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.gradebook import store
from autograder.learner_text import first_sentence
from autograder.mistakes.cases import Case, Plan, uncovered_sentence
from autograder.reports import results_json
from autograder.results import points
from autograder.results.mistake_tags import MARKER

EPSILON = 1e-9

# Short verdicts (the table's last column).
OK = "ok"
MISSED = "missed"
NOT_NAMED = "not named"
PARTLY_NAMED = "partly named"
LEAKS = "leaks"
LOSES = "loses points"
NOT_ZERO = "not zero"
NOT_APPLIED = "not applied"
ERROR = "error"
NO_MUTANT = "no mutant"
SCORE_DIFFERS = "score differs"

# What each kind of case must score (the table's Expected column): full marks, zero, less than
# full marks in its own component (and full marks elsewhere), or a mutant written for it.
EXPECTED = {
    "reference": "full",
    "variant": "full",
    "stubs": "zero",
    "mutant": "< full",
    "uncovered": "a mutant",
}

# Why a case failed: one or more sentences after the case's label.
NOT_GRADED = "It could not be graded: {error}"
GRADER_ERRORS = "The graders themselves failed while grading it: {error}"
SHOULD_BE_FULL = "It should keep full marks but loses points in {where}. First failure: {first}"
SHOULD_BE_ZERO = (
    "The stubs should score zero but score points in {where}: {tests} pass without any "
    "implementation."
)
MUTANT_MISSED = (
    "The graders miss this mistake: {component} keeps full marks with it planted; add a test "
    "that fails on it."
)
MUTANT_NOT_NAMED = (
    "The graders catch this mistake but no failing test of {component} names [{id}]{instead}; "
    "pass mistake({id!r}) to the check that fails."
)
MUTANT_NONE_NAMED = (
    "The graders catch this implementation but no failing test of {component} names any of its "
    "mistakes, {ids}{instead}; pass mistake(...) to the checks that fail."
)
NAMED_INSTEAD = " (they name {ids} instead)"
MUTANT_PARTLY_NAMED = (
    "The graders name {id} in {named} of the {failing} failing tests of {component}, but not "
    "in {tests}: a learner with this mistake reads those messages too; pass "
    "mistake({mistake!r}) to their failing checks (or as their hint)."
)
MUTANT_SOME_UNNAMED = (
    "No failing test of {component} names {unnamed}, which this implementation also has: a "
    "learner with it is never told; find it in a failing check and pass its mistake() there."
)
MUTANT_SCORE = (
    "Its notes predict {expected} points in {component}, but it scores {got}: the graders "
    "charge its mistakes differently from what its entry says."
)
MUTANT_LEAKS = (
    "It also costs points in {where}; only the mistake's own component should lose points, so "
    "that a learner does not pay twice for one mistake."
)
BUILDS_ON = (
    " {users} {verb} on {component} (depends_on): grade {them} with a known-good {component} "
    "in place of the learner's."
)


@dataclass
class Outcome:
    """A graded case: component scores, failing test messages per component, or an error."""

    scores: dict[str, float] = field(default_factory=dict)
    failures: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # (test, message)
    passing: dict[str, list[str]] = field(default_factory=dict)  # test names
    error: str = ""
    grader_errors: list[str] = field(default_factory=list)


@dataclass
class Row:
    """One line of the check's table. ``component``: the score of the case's own component
    (mutants, variants; "" for the references and the stubs, which have none); ``total``: the
    course total; both "-" when the case was not graded."""

    case: Case
    expected: str
    component: str = ""
    total: str = ""
    named: bool | None = None  # mutants only: every failing test of its component names it
    named_in: tuple[int, int] | None = None  # mutants only: (tests naming it, failing tests)
    verdict: str = OK
    reasons: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict == OK

    @property
    def caught_and_named(self) -> bool:
        """A mutant whose own component lost points and whose feedback names it."""
        return self.case.kind == "mutant" and self.named is True


def read_outcome(out: Path, key: str) -> Outcome:
    """The grade the batch run left in out/<key>; an Outcome with an error when none."""
    record = store.read_record(out, key)
    if record is None:
        return Outcome(error=f"no grade was written to {Path(out) / key}.")
    if record.error:
        return Outcome(error=record.error)
    outcome = Outcome(scores=dict(record.components))
    path = store.learner_dir(out, key) / results_json.FILE_NAME
    try:
        document = results_json.read_results_json(path)
    except results_json.ResultsFileError as error:
        return Outcome(error=str(error))
    for test in document.get("tests", []):
        component = (test.get("tags") or [""])[0]
        if test.get("status") == "passed":
            outcome.passing.setdefault(component, []).append(test.get("name", ""))
        else:
            failure = (test.get("name", ""), test.get("output", ""))
            outcome.failures.setdefault(component, []).append(failure)
    outcome.grader_errors = list(document.get("extra_data", {}).get("grader_errors", []))
    return outcome


def judge(plan: Plan, case: Case, outcome: Outcome | None, problem: str = "") -> Row:
    """The row for a case. problem: a sentence found before grading (edits that do not apply)."""
    config = plan.config
    expected = EXPECTED[case.kind]
    row = Row(case, expected)
    if case.kind == "uncovered":
        row.component, row.total, row.verdict = "-", "-", NO_MUTANT
        row.reasons.append(uncovered_sentence(plan, case))
        return row
    if problem:
        row.component, row.total, row.verdict = "-", "-", NOT_APPLIED
        row.reasons.append(problem)
        return row
    if outcome is None or outcome.error:
        error = outcome.error if outcome is not None else "it was not graded."
        row.component, row.total, row.verdict = "-", "-", ERROR
        row.reasons.append(NOT_GRADED.format(error=error))
        return row

    maxima = {c.name: float(c.points) for c in config.components}
    scores = {name: outcome.scores.get(name, 0.0) for name in maxima}
    lost = [name for name in maxima if scores[name] < maxima[name] - EPSILON]
    total, total_max = sum(scores.values()), sum(maxima.values())
    row.total = f"{_short(total)}/{_short(total_max)}"
    if case.component in maxima:
        own = case.component
        row.component = f"{_short(scores[own])}/{_short(maxima[own])}"
    if outcome.grader_errors:
        row.verdict = ERROR
        row.reasons.append(GRADER_ERRORS.format(error=first_sentence(outcome.grader_errors[0])))

    if case.kind in ("reference", "variant"):
        if lost:
            row.verdict = row.verdict if row.verdict == ERROR else LOSES
            first = outcome.failures.get(lost[0], [("", "")])[0]
            row.reasons.append(
                SHOULD_BE_FULL.format(
                    where=_where(lost, scores, maxima),
                    first=f'"{first[0]}": {first_sentence(first[1])}',
                )
            )
        return row

    if case.kind == "stubs":
        scoring = [name for name in maxima if scores[name] > EPSILON]
        if scoring:
            row.verdict = row.verdict if row.verdict == ERROR else NOT_ZERO
            tests = [t for name in scoring for t in outcome.passing.get(name, [])]
            row.reasons.append(
                SHOULD_BE_ZERO.format(where=_where(scoring, scores, maxima), tests=_list(tests))
            )
        return row

    return _judge_mutant(plan, case, outcome, row, scores, maxima, lost)


def _judge_mutant(plan, case, outcome, row, scores, maxima, lost) -> Row:
    """A mutant's row: caught in its own component, each failing test naming one of its
    mistakes and each of them named, no other component losing points, its score if given."""
    own = case.component
    also = [name for name in lost if name != own]
    failing = outcome.failures.get(own, [])
    named_ids = {found for _, message in failing for found in MARKER.findall(message)}
    verdicts = []
    if own not in lost:
        verdicts.append(MISSED)
        row.reasons.append(MUTANT_MISSED.format(component=own))
    else:
        verdicts += _naming(plan, case, failing, named_ids, row)
    if case.score is not None and _short(scores.get(own, 0.0)) != _short(case.score):
        verdicts.append(SCORE_DIFFERS)
        row.reasons.append(
            MUTANT_SCORE.format(
                component=own, expected=_short(case.score), got=_short(scores.get(own, 0.0))
            )
        )
    if also:
        verdicts.append(LEAKS)
        reason = MUTANT_LEAKS.format(where=_where(also, scores, maxima))
        users = [name for name in also if name in plan.dependents.get(own, frozenset())]
        if users:
            one = len(users) == 1
            reason += BUILDS_ON.format(
                users=_list(users),
                verb="builds" if one else "build",
                component=own,
                them="it" if one else "them",
            )
        row.reasons.append(reason)
    if row.verdict != ERROR and verdicts:
        row.verdict = verdicts[0]
    return row


def _naming(plan, case, failing, named_ids, row) -> list[str]:
    """The naming verdicts of a caught mutant (and their reasons, added to row)."""
    own, ids = case.component, set(case.mistakes)
    silent = [test for test, message in failing if not ids & set(MARKER.findall(message))]
    unnamed = [full_id for full_id in case.mistakes if full_id not in named_ids]
    row.named = not silent and not unnamed
    row.named_in = (len(failing) - len(silent), len(failing))
    shown = ", ".join(f"[{full_id}]" for full_id in case.mistakes)
    if len(unnamed) == len(case.mistakes):
        others = sorted(named_ids & {m.id for m in plan.catalogue})
        instead = NAMED_INSTEAD.format(ids=", ".join(others)) if others else ""
        if len(ids) == 1:
            reason = MUTANT_NOT_NAMED.format(component=own, id=case.mistake, instead=instead)
        else:
            reason = MUTANT_NONE_NAMED.format(component=own, ids=shown, instead=instead)
        row.reasons.append(reason)
        return [NOT_NAMED]
    verdicts = []
    if unnamed:
        verdicts.append(PARTLY_NAMED)
        row.reasons.append(
            MUTANT_SOME_UNNAMED.format(
                component=own, unnamed=_list([f"[{full_id}]" for full_id in unnamed])
            )
        )
    if silent:
        verdicts.append(PARTLY_NAMED)
        row.reasons.append(
            MUTANT_PARTLY_NAMED.format(
                id=shown,
                named=len(failing) - len(silent),
                failing=len(failing),
                component=own,
                tests=_list([f'"{test}"' for test in silent]),
                mistake=case.mistake,
            )
        )
    return verdicts


def _short(value: float) -> str:
    """A score for the table: at most two decimals, no trailing zeros (17.5, 6.67, 20)."""
    return f"{round(value, 2):g}"


def _where(names: list[str], scores: dict[str, float], maxima: dict[str, float]) -> str:
    return _list([f"{n} ({points(scores[n])} / {points(maxima[n])})" for n in names])


def _list(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
