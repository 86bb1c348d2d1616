"""summary.md's "What to fix": a learner's failing tests grouped into problems.

A component's failing tests are one problem when:

1. they name the same catalogued mistake (the problem's sentence is the mistake's);
2. they fail with the same message;
3. a hidden test's message is a visible one's without its line (same_problem.hidden_form): the
   problem keeps the visible message, its line included;
4. a call was not run again after it ran out of time (or its process ended) in earlier tests
   (same_problem.stopped_call): the problem is that time-out's, told by its sentence.
5. their messages have one form once the numbers, sizes and arguments that change with a
   test's inputs are left out (same_problem.alike_form): the problem keeps the first message.

Problems keep the order of their first test.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from autograder.results import TestResult
from autograder.results.mistake_tags import named_mistake_in_full
from autograder.results.same_problem import alike_form, hidden_form, stopped_call


@dataclass
class Problem:
    """One item of "What to fix": a component's problem, its sentence and the failing tests
    that found it. ``mistake``: a catalogued mistake's id, "" for a message."""

    component: str
    sentence: str
    mistake: str = ""
    tests: list[TestResult] = field(default_factory=list)


#: (the problem's sentence -> what a problem it joins has in common with it, or None; whether
#: a problem with this sentence joins another, not the other way round).
Joining = tuple[Callable[[str], Hashable | None], Callable[[str], bool]]

#: A hidden test's message (it has no line) joins the visible message it is without its line.
WITHOUT_LINE: Joining = (hidden_form, lambda sentence: hidden_form(sentence) == sentence)


def _stopped(sentence: str) -> tuple[str, str] | None:
    found = stopped_call(sentence)
    return None if found is None else found[:2]


def _not_run_again(sentence: str) -> bool:
    found = stopped_call(sentence)
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
    """Rules 1 and 2: one problem per catalogued mistake or message of a component."""
    groups: dict[tuple[str, str, str], Problem] = {}
    for test in failing:
        named = named_mistake_in_full(test.message)
        mistake, sentence = named if named is not None else ("", test.message)
        key = (test.component, mistake, sentence if not mistake else "")
        groups.setdefault(key, Problem(test.component, sentence, mistake)).tests.append(test)
    return list(groups.values())


def _joined(found: list[Problem], joining: Joining) -> list[Problem]:
    """Each problem that joins another (rules 3 and 4) added to the first problem of its
    component that has the same in common with it and does not itself join one; the others as
    they were."""
    common, joins = joining
    hosts: dict[tuple[str, Hashable], Problem] = {}
    for problem in found:
        shared = None if problem.mistake else common(problem.sentence)
        if shared is not None and not joins(problem.sentence):
            hosts.setdefault((problem.component, shared), problem)
    kept = []
    for problem in found:
        host = None
        if not problem.mistake and joins(problem.sentence):
            host = hosts.get((problem.component, common(problem.sentence)))
        if host is None:
            kept.append(problem)
        else:
            host.tests.extend(problem.tests)
    return kept


def _alike(found: list[Problem]) -> list[Problem]:
    """Rule 5: each problem told by a message added to the first problem of its component
    whose message has the same alike_form; catalogued mistakes as they were."""
    hosts: dict[tuple[str, str], Problem] = {}
    kept = []
    for problem in found:
        key = (problem.component, alike_form(problem.sentence))
        host = None if problem.mistake else hosts.setdefault(key, problem)
        if host is None or host is problem:
            kept.append(problem)
        else:
            host.tests.extend(problem.tests)
    return kept
