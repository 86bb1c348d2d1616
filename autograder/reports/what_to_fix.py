"""summary.md's "What to fix": a learner's failing tests grouped into problems.

A component's failing tests are one problem when:

1. they name the same catalogued mistake (the problem's sentence is the mistake's);
2. they fail with the same message;
3. a hidden test's message is a visible one's without its line (same_problem.hidden_form): the
   problem keeps the visible message, its line included;
4. a call was not run again after it ran out of time (or its process ended) in earlier tests
   (same_problem.stopped_call, from the tests' error kind the harness gave them, never from
   words alone): the problem is that time-out's, told by its sentence.
5. their messages have one form once the numbers, sizes and arguments that change with a
   test's inputs are left out (same_problem.alike_form): the problem keeps the first message.

Problems keep the order of their first test.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from autograder.results import TestResult
from autograder.results.mistake_tags import named_mistakes, told_together
from autograder.results.same_problem import STOPPED_KINDS, alike_form, hidden_form, stopped_call


@dataclass
class Problem:
    """One item of "What to fix": a component's problem, its sentence and the failing tests
    that found it. ``mistake``: a catalogued mistake's id, "" for a message; ``kind``: its
    tests' error kind when the harness stopped their call ("timeout", "crash"), else ""."""

    component: str
    sentence: str
    mistake: str = ""
    tests: list[TestResult] = field(default_factory=list)
    kind: str = ""


#: (the problem -> what a problem it joins has in common with it, or None; whether the
#: problem joins another, not the other way round).
Joining = tuple[Callable[[Problem], Hashable | None], Callable[[Problem], bool]]

#: A hidden test's message (it has no line) joins the visible message it is without its line.
WITHOUT_LINE: Joining = (
    lambda problem: hidden_form(problem.sentence),
    lambda problem: hidden_form(problem.sentence) == problem.sentence,
)


def _stopped(problem: Problem) -> tuple[str, str] | None:
    found = stopped_call(problem.sentence, problem.kind)
    return None if found is None else found[:2]


def _not_run_again(problem: Problem) -> bool:
    found = stopped_call(problem.sentence, problem.kind)
    return found is not None and found[2]


#: A call not run again joins the time-out (or ended process) of the same call.
NOT_RUN_AGAIN: Joining = (_stopped, _not_run_again)


def problems(failing: Sequence[TestResult]) -> list[Problem]:
    """The failing tests as problems, in order of each problem's first test."""
    found = _by_sentence(failing)
    for joining in (WITHOUT_LINE, NOT_RUN_AGAIN):
        found = _joined(found, joining)
    return _alike(found)


def _by_sentence(failing: Sequence[TestResult]) -> list[Problem]:
    """Rules 1 and 2: one problem per catalogued mistake or message of a component (a call the
    harness stopped apart from learner text in the same words)."""
    groups: dict[tuple[str, str, str, str], Problem] = {}
    for test in failing:
        named = named_mistakes(test.message)
        mistake = " or ".join(m for m, _ in named)
        sentence = told_together([s for _, s in named]) if named else test.message
        kind = test.error_kind if test.error_kind in STOPPED_KINDS and not mistake else ""
        key = (test.component, mistake, sentence if not mistake else "", kind)
        problem = groups.setdefault(key, Problem(test.component, sentence, mistake, kind=kind))
        problem.tests.append(test)
    return list(groups.values())


def _joined(found: list[Problem], joining: Joining) -> list[Problem]:
    """Each problem that joins another (rules 3 and 4) added to the first problem of its
    component that has the same in common with it and does not itself join one; the others as
    they were."""
    common, joins = joining
    hosts: dict[tuple[str, Hashable], Problem] = {}
    for problem in found:
        shared = None if problem.mistake else common(problem)
        if shared is not None and not joins(problem):
            hosts.setdefault((problem.component, shared), problem)
    kept = []
    for problem in found:
        host = None
        if not problem.mistake and joins(problem):
            host = hosts.get((problem.component, common(problem)))
        if host is None:
            kept.append(problem)
        else:
            host.tests.extend(problem.tests)
    return kept


def _alike(found: list[Problem]) -> list[Problem]:
    """Rule 5: each problem told by a message added to the first problem of its component
    whose message has the same alike_form (and the same stopped kind); catalogued mistakes as
    they were."""
    hosts: dict[tuple[str, str, str], Problem] = {}
    kept = []
    for problem in found:
        key = (problem.component, problem.kind, alike_form(problem.sentence))
        host = None if problem.mistake else hosts.setdefault(key, problem)
        if host is None or host is problem:
            kept.append(problem)
        else:
            host.tests.extend(problem.tests)
    return kept
