"""The points rule: a submission's test outcomes into its GradeResult.

The points rule (docs/architecture.md):

* A component's points (course.toml) are split over its tests that ran, by weight
  (`@pytest.mark.weight(n)`, default 1): a test is worth `points * weight / sum of the weights
  of that component's tests that ran`, all or nothing.
* A component whose own module file called a forbidden API scores zero, whatever its tests
  said; every one of its tests carries the forbidden sentence. A call from a learner file no
  component owns (a helper module, or code that named no file of the package as its own) is
  charged to the component whose test was running: the record then carries that component,
  (api, file, line, component). A forbidden API called by another's code (a NestedCall) is not
  told apart when that other API's use is told in the same component, zeroed by it anyway.
* A component none of whose tests ran scores zero out of its points.
* Totals are exact sums (computed with fractions); only display rounds, to the cent, a half up.

A failing test's message starts with a capital letter (capitalised, by the pytest plugin too):
pytest's report, results.json, summary.md and the terminal show the same sentence.

Dependencies between components add fix-first notes (dependencies.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from autograder.config import Component, CourseConfig
from autograder.learner_text import first_sentence_and_place, with_place
from autograder.results.dependencies import note_dependencies
from autograder.results.mistake_tags import named_mistake
from autograder.results.model import ComponentResult, ForbiddenUse, NestedCall, TestResult

FORBIDDEN_AT = "{sentence} It was called in {file} at line {line}."
#: ForbiddenUse.api of a component zeroed because its code changed the worker (runtime).
TAMPERING = "tampering with the grader"
#: Line 0: the call came from learner code compiled under another file's name (guard.py).
FORBIDDEN_DISGUISED = (
    "{sentence} It was called by code of {file} that was compiled under another file's name."
)
#: ... and the object called came from no file of the package either (guard.UNKNOWN_FILE).
FORBIDDEN_NO_FILE = "{sentence} It was called by learner code compiled under another file's name."
NO_TESTS_RAN = "No test of this component ran, so it scores zero."
NOT_CHOSEN = "Not graded: this run graded only the components asked for (--component)."
THE_CALL = "The call {message}"
THE_FILE = "The file {message}"
#: A forbidden call as the worker records it: (api, file, line), or (api, file, line,
#: component) charged to the component whose test made it, or a NestedCall made inside another
#: forbidden API; or a ForbiddenUse the static check found in the source
#: (static_check.check_package), with its own sentence.
Record = tuple[str, str, int] | tuple[str, str, int, str] | NestedCall | ForbiddenUse
_CODE_FIRST = re.compile(r"[A-Za-z_][\w.]*[(\[]")
_PATH_FIRST = re.compile(r"[\w.-]+(/[\w.-]+)+[:,]?(\s|$)|[\w.-]+\.py[:,]?(\s|$)")


def capitalised(message: str) -> str:
    """A learner-facing message that starts with a capital letter: a leading lowercase word is
    capitalised ("the gradient of" -> "The gradient of"); a leading call, which must keep its
    spelling, gets THE_CALL in front ("The call softmax(...) is not implemented yet"), and a
    leading file path THE_FILE ("The file assignments/t101/x.py has a syntax error")."""
    if not message or not message[0].islower():
        return message
    if _PATH_FIRST.match(message):
        return THE_FILE.format(message=message)
    if _CODE_FIRST.match(message) or "_" in message.split(" ", 1)[0]:
        return THE_CALL.format(message=message)
    return message[0].upper() + message[1:]


def forbidden_uses(config: CourseConfig, records: Iterable[Record]) -> list[ForbiddenUse]:
    """(api, file, line) records from the worker, deduplicated, each with its component: the
    one a 4-tuple (api, file, line, component) names (the component whose test made the
    call), else the one whose module is the file. ForbiddenUses (the static check's, with
    their own sentences) come first, but one the worker also saw called is told as called.

    A NestedCall (a forbidden API torch's code of another one called, e.g.
    ``F.multi_head_attention_forward`` inside ``nn.MultiheadAttention``) is told only when
    no use of the API it was made in is told in its component: the learner's one use is told
    once, and the component scores zero by that use, whatever the worker said of nesting."""
    records = list(records)
    nested = {r for r in records if isinstance(r, NestedCall)}
    direct = [r for r in records if not isinstance(r, NestedCall)]
    uses = _told(config, direct)
    untold = _unexplained(config, nested, uses)
    return _told(config, direct + untold) if untold else uses


def _unexplained(
    config: CourseConfig, nested: set[NestedCall], uses: list[ForbiddenUse]
) -> list[Record]:
    """The nested calls made inside no API told in their component (an API told there, or
    one in turn explained so), as records charged to that component."""
    charged = {(n.api, n.file, n.line, n.within) for n in nested if n.component}
    calls = []
    for call in nested:
        if call.component or (call.api, call.file, call.line, call.within) not in charged:
            owner = config.component_for_file(call.file)
            calls.append((call, call.component or (owner.name if owner else "")))
    told = {(use.component, use.api) for use in uses}
    while True:
        more = {(c, call.api) for call, c in calls if (c, call.within) in told} - told
        if not more:
            break
        told |= more
    return [(n.api, n.file, n.line, c) for n, c in calls if (c, n.within) not in told]


def _told(config: CourseConfig, records: Iterable[Record]) -> list[ForbiddenUse]:
    """forbidden_uses of records with no NestedCall."""
    made = sorted({r for r in records if isinstance(r, ForbiddenUse)}, key=_use_key)
    records = {r for r in records if not isinstance(r, ForbiddenUse)}
    charged = {record[:3] for record in records if len(record) == 4}
    uses: list[ForbiddenUse] = []
    for record in sorted(records):
        api, file, line = record[:3]
        if len(record) == 3 and record in charged:
            continue  # the same call, charged to the component whose test made it
        owner = config.component_for_file(file)
        component = record[3] if len(record) == 4 else (owner.name if owner else "")
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
    called = {_use_key(use) for use in uses}
    return [use for use in made if _use_key(use) not in called] + uses


def _use_key(use: ForbiddenUse) -> tuple:
    return (use.component, use.file, use.line, use.api)


@dataclass(frozen=True)
class ModuleScores:
    """The course's components scored by the points rule: exact totals, scored tests."""

    tests: tuple[TestResult, ...]
    components: tuple[ComponentResult, ...]
    score: Fraction
    max_score: Fraction
    forbidden: tuple[ForbiddenUse, ...]


def score_modules(
    config: CourseConfig,
    tests: Iterable[TestResult],
    forbidden: Iterable[Record] = (),
    chosen: Sequence[str] = (),
) -> ModuleScores:
    """Apply the points rule to the tests that ran, component by component; ``chosen``: the
    components a run asked for (--component), the others told NOT_CHOSEN."""
    uses = forbidden_uses(config, forbidden)
    by_component: dict[str, list[TestResult]] = {c.name: [] for c in config.components}
    for test in tests:
        by_component.setdefault(test.component, []).append(test)
    scored: list[TestResult] = []
    components: list[ComponentResult] = []
    total, total_max = Fraction(0), Fraction(0)
    for component in config.components:
        zeroed = tuple(u.sentence for u in uses if u.component == component.name)
        own, result, score = _score_component(component, by_component[component.name], zeroed)
        if chosen and component.name not in chosen and not own:
            result = replace(result, problem=NOT_CHOSEN)
        scored += own
        components.append(result)
        total += score
        total_max += Fraction(component.points)
    components, scored = note_dependencies(config, components, scored)
    return ModuleScores(tuple(scored), tuple(components), total, total_max, tuple(uses))


def _score_component(
    component: Component, own: list[TestResult], zeroed: tuple[str, ...]
) -> tuple[list[TestResult], ComponentResult, Fraction]:
    """One component's tests scored, its result and its exact score."""
    weights = sum(Fraction(t.weight) for t in own)
    value = Fraction(component.points)
    score = Fraction(0)
    scored = []
    for test in own:
        share = value * Fraction(test.weight) / weights
        if not test.passed:
            test = replace(test, message=capitalised(test.message))
        if zeroed:
            # Keep a failure's own sentence unless it is the runtime's forbidden one again.
            own_failure = not test.passed and test.error_kind not in ("forbidden", "tampered")
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
        named = ((named_mistake(t.message), t.message) for t in failing)
        found = next(((n, message) for n, message in named if n), None)
        problem = with_place(*found) if found else first_sentence_and_place(failing[0].message)
    result = ComponentResult(
        name=component.name,
        title=component.title,
        score=float(score),
        max_score=float(value),
        passed=0 if zeroed else len(own) - len(failing),
        total=len(own),
        forbidden=zeroed,
        problem=problem,
    )
    return scored, result, score
