"""Outcomes: each grader test's first failure as the learner-facing sentence, and its result.

A failed test's report shows the learner's sentence only, never a traceback into grader code:
the first failure is raised again as ``pytest.fail(sentence, pytrace=False)`` in the hook
wrappers around setup, call and teardown. When the test's teardown is over, its TestResult joins
the run's results; pytest's summary then shows the points per component.

Design (which sentence for which failure, and why here): docs/internals/runtime.md#outcomes.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from autograder.feedback import GradingFailure
from autograder.learner_text import cap, clean, first_sentence
from autograder.pytest_plugin.state import INFO, OUTCOME, STATE, GraderInfo, Outcome, RunState
from autograder.results import (
    TAMPERING,
    ForbiddenUse,
    GradeResult,
    TestResult,
    build_grade,
    capitalised,
    note_for_test,
    points,
)

GRADER_ERROR = (
    "The grader itself failed in {test}; this is not your fault — tell your instructor: "
    "{type}: {message}"
)
GRADER_ERROR_HIDDEN_DETAIL = "(the details, which could reveal hidden inputs, are in the log)"
PLAIN_ASSERT_HIDDEN = "A hidden check in {test} failed."
LEARNER_OUTPUT = "Your code printed"
CAPTURED = "Captured "  # how pytest's capture names the sections it adds to a report


@dataclass(frozen=True)
class _Crash:
    message: str


@dataclass(frozen=True)
class _Sentence:
    """A failed test's message as its report's longrepr: written whole in the console's
    FAILURES section, as a plain string was, and on one line in the short summary (-rfE), so
    that newlines in learner text cannot start lines of their own there (such as a forged
    "FAILED ... - PASSED")."""

    text: str

    @property
    def reprcrash(self) -> _Crash:  # what pytest's short summary reads
        return _Crash(" ".join(line.strip() for line in self.text.splitlines() if line.strip()))

    def toterminal(self, out: Any) -> None:
        out.line(self.text)

    def __str__(self) -> str:
        return self.text


def _first_failure(item: pytest.Item) -> Iterator[None]:
    """The body of the phase wrappers: a grader test's first failure, explained and raised
    again as pytest.fail(sentence, pytrace=False)."""
    try:
        return (yield)
    except (Exception, pytest.fail.Exception) as error:
        info = item.stash.get(INFO, None)
        outcome = item.stash.setdefault(OUTCOME, Outcome())
        xfail = isinstance(error, pytest.xfail.Exception) or item.get_closest_marker("xfail")
        if info is None or outcome.status != "passed" or outcome.explained or xfail:
            raise
        outcome.explained = _explain(error, item, item.config.stash[STATE])
        raise pytest.fail.Exception(outcome.explained[0], pytrace=False) from None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _first_failure(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _first_failure(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    return (yield from _first_failure(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    info = item.stash.get(INFO, None)
    if info is None:
        return report
    state = item.config.stash[STATE]
    outcome = item.stash.setdefault(OUTCOME, Outcome())
    outcome.duration += report.duration
    if any(title.startswith(CAPTURED) for title, _ in report.sections):
        state.captured = True
    if report.when == "call":
        outcome.ran = not report.skipped
    if report.failed and outcome.status == "passed":
        if outcome.explained is not None:
            message, kind = outcome.explained
        else:  # failed without an exception through the wrappers (a strict xpass, say)
            error = call.excinfo.value if call.excinfo is not None else None
            message, kind = _explain(error, item, state)
        report.longrepr = _Sentence(_shown(message, kind, item, info, state))  # type: ignore[assignment]
        outcome.status, outcome.message, outcome.error_kind = "failed", message, kind
        outcome.report = report
        outcome.ran = True
    if report.when == "teardown":
        _finish(item, info, outcome, state)
    return report


def _shown(message: str, kind: str, item: pytest.Item, info: GraderInfo, state: RunState) -> str:
    """The failure as pytest shows it: its message, then "Fix Softmax first: ..." when a part
    of the learner's own that the test ran has failed its own tests so far (the grade notes
    every test the same way once all have run: results.note_dependencies)."""
    failing = {r.component for r in state.results if not r.passed}
    test = TestResult(
        info.name, item.nodeid, info.component, message=message, error_kind=kind, uses=_uses(item)
    )
    note = note_for_test(state.course, test, failing) if failing else ""
    return f"{message} {note}" if note else message


def _explain(error: BaseException | None, item: pytest.Item, state: RunState) -> tuple[str, str]:
    """(learner-facing message, error kind) for the exception that failed a phase, the message
    capitalised as the grade tells it ("The call softmax(...) is not implemented yet"), so that
    `pytest` and `autograder grade` show the learner the same sentence."""
    message, kind = _explained(error, item, state)
    return capitalised(message), kind


def _explained(error: BaseException | None, item: pytest.Item, state: RunState) -> tuple[str, str]:
    """_explain's message as the exception gives it, and its kind."""
    from autograder.runtime import LearnerError, MachineBusy

    if isinstance(error, GradingFailure):
        return error.message, "failed"
    if isinstance(error, LearnerError):
        if error.kind == "tampered":  # the whole component, as a forbidden use would
            component = item.stash[INFO].component
            state.forbidden.add(ForbiddenUse(TAMPERING, "", 0, component, error.feedback))
        return error.feedback, error.kind
    if isinstance(error, MachineBusy):  # the grading's failure, told in the learner's words
        state.grader_errors.append(f"{item.nodeid}: {error.feedback}")
        return error.feedback, "grader_error"
    if isinstance(error, pytest.fail.Exception):
        return str(error.msg), "failed"
    if isinstance(error, AssertionError):
        info = item.stash[INFO]
        line = first_sentence(str(error)) if info.visibility == "visible" else ""
        return line or PLAIN_ASSERT_HIDDEN.format(test=item.name), "failed"
    kind = type(error).__name__ if error is not None else "Error"
    detail = cap(clean(str(error)).split("\n", 1)[0], 300) if error is not None else ""
    state.grader_errors.append(f"{item.nodeid}: {kind}: {detail}")
    shown = detail if item.stash[INFO].visibility == "visible" else GRADER_ERROR_HIDDEN_DETAIL
    return GRADER_ERROR.format(test=item.name, type=kind, message=shown), "grader_error"


def _finish(item: pytest.Item, info: GraderInfo, outcome: Outcome, state: RunState) -> None:
    if not outcome.ran:
        return  # skipped or deselected: it did not run, so it carries no points
    # What learner code printed during a hidden test can hold the test's inputs: it is in no
    # report (results.json, summary.md, junit.xml, grader.log), which a learner may all get.
    if outcome.output and outcome.report is not None and info.visibility == "visible":
        outcome.report.sections.append((LEARNER_OUTPUT, clean(outcome.output)))
    state.results.append(
        TestResult(
            name=info.name,
            nodeid=item.nodeid,
            component=info.component,
            weight=info.weight,
            status="passed" if outcome.status == "passed" else "failed",
            message=outcome.message,
            visibility=info.visibility,
            duration=outcome.duration,
            output=outcome.output,
            error_kind=outcome.error_kind,
            uses=_uses(item),
        )
    )


def _uses(item: pytest.Item) -> tuple[str, ...] | None:
    """The components whose learner code the test ran: its closest `uses` marker's arguments
    but those a stand-in replaced, and those that were placeholders in the tested module
    (user_properties); None without a marker (not declared)."""
    mark = item.get_closest_marker("uses")
    if mark is None:
        return None
    replaced = {value for key, value in item.user_properties if key == "replaced"}
    used = [name for name in mark.args if name not in replaced]
    placeholders = [value for key, value in item.user_properties if key == "unavailable"]
    return tuple(dict.fromkeys([*used, *placeholders]))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """When graders ran: the points per component that ran, as the grade counts them."""
    state = config.stash.get(STATE, None)
    if state is None or not state.results:
        return
    result = state.graded or run_grade(state)
    terminalreporter.section("autograder points")
    modules = {c.name for c in state.course.components}
    for c in result.components:
        if c.total and c.name in modules:
            line = f"{c.title}: {points(c.score)} / {points(c.max_score)} ({c.passed}/{c.total})"
            terminalreporter.write_line(line)
    for use in result.forbidden:
        terminalreporter.write_line(use.sentence)


def run_grade(state: RunState) -> GradeResult:
    """The points rule over what a plain pytest run's tests found."""
    return build_grade(
        state.course,
        state.results,
        submission=str(state.submission),
        seed=state.seed,
        hidden_included=any(t.visibility == "hidden" for t in state.results),
        forbidden=state.forbidden,
        review=state.review,
    )
