"""The fixtures graders use (`course`, `learner`, `rng`) and the per-test bracket around them.

No fixture here takes pytest's `request`: for every fixture that does, pytest builds a fixture
definition for `request` each time a test sets it up (inspecting a function's signature), and
once more for the test itself; with the per-test fixtures below that was about 770 per learner,
some 5% of a batch learner's harness time. They find the test being run through the item that
pytest_runtest_protocol below keeps, and its run's state through the item's config.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import gc
import random
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from autograder.config import CourseConfig, SubmissionError
from autograder.feedback import hidden_context
from autograder.pytest_plugin.collection import seed_for
from autograder.pytest_plugin.state import INFO, OUTCOME, STATE, Outcome, RunState
from autograder.results import NestedCall, TestResult

NO_COURSE = (
    "The {fixture} fixture needs a course, but no course.toml was found here or above; "
    "pass --course FILE."
)
NO_ITEM = (
    "The {fixture} fixture is set up outside a test: the autograder plugin finds the test "
    "through pytest_runtest_protocol, which did not run for it."
)
NO_STANDINS_FILE = (
    "The stand-ins file {path} (course.toml [course] standins) does not exist; fix the path, or "
    "remove the key when the course supplies no stand-ins."
)
#: Answer bytes read from the worker after which the harness frees memory at the end of a test.
RELEASE_AFTER_BYTES = 64 * 2**20

_RUNNING: list[pytest.Item] = []  # the tests being run, innermost last (a run inside a test)


def torn_down() -> bool:
    """Whether no test of this plugin's is running (none left half run by an error)."""
    return not _RUNNING


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[Any]:
    """Keep the item being run (setup, call and teardown) for the fixtures below."""
    _RUNNING.append(item)
    try:
        return (yield)
    finally:
        _RUNNING.pop()
        outcome = item.stash.get(OUTCOME, None)
        if outcome is not None and outcome.release_memory:
            _release_memory()


def _release_memory() -> None:
    """Free the learner outputs that tests which are over left behind.

    A failed test's traceback holds its frames, and so the outputs in their variables: pytest
    keeps the last one in sys.last_value (for post-mortem debugging) and the others in
    reference cycles that only a full collection frees, which the interpreter seldom runs.
    A learner returning 240 MB arrays made the harness grow by up to 0.7 GB a test (5 GB over
    one component's tests); grading needs neither.
    """
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            delattr(sys, name)
    gc.collect()


def _running(fixture: str) -> pytest.Item:
    if not _RUNNING:
        pytest.fail(NO_ITEM.format(fixture=fixture), pytrace=False)
    return _RUNNING[-1]


def _state(config: pytest.Config, fixture: str) -> RunState:
    state = config.stash.get(STATE, None)
    if state is None:
        pytest.fail(NO_COURSE.format(fixture=fixture), pytrace=False)
    return state


def earlier_results() -> tuple[TestResult, ...]:
    """The results of this run's tests that finished before the running one, in order: what a
    grader may weigh of an earlier component's own tests (what they charged), rather than ask
    learner code again in a later test, where it can tell the question apart."""
    item = _running("earlier_results")
    return tuple(_state(item.config, "earlier_results").results)


@pytest.fixture(scope="session")
def course() -> CourseConfig:
    """The validated course.toml of this run."""
    return _state(_running("course").config, "course").course


@pytest.fixture(scope="session")
def learner() -> Iterator[Any]:
    """The LearnerSession on the submission: the only way graders reach learner code."""
    from autograder.runtime import LearnerSession, Limits
    from autograder.static_check import check_package

    state = _state(_running("learner").config, "learner")
    config = state.course
    try:
        package_dir = config.package_dir_for(state.submission)
    except SubmissionError as error:
        pytest.fail(str(error), pytrace=False)
    # The trusted side's own reading of the source, before any of it runs (static_check).
    static = check_package(config, package_dir)
    state.forbidden.update(static.uses)
    state.review = static.review
    limits = config.limits.model_dump()
    limits["max_wire_bytes"] = limits.pop("value_mb") * 2**20
    if state.test_timeout is not None:
        limits["test_timeout"] = state.test_timeout
    standins = config.course.standins  # instructor only: a learner's repository has none
    if standins is not None and not standins.is_file():
        pytest.fail(NO_STANDINS_FILE.format(path=standins), pytrace=False)
    session = LearnerSession(
        package_dir,
        package=config.package,
        limits=Limits(**limits),
        forbidden_apis=tuple(config.forbidden.apis),
        forbidden_message=config.forbidden.message,
        display_dir=config.course.package_dir.as_posix(),  # as the learner's repository names it
        # the references and hidden tests, reports and caches: out of learner code's reach
        hide_paths=(config.root, *state.hidden),
        tamper_evidence=static.evidence,  # a worker that breaks is then told as tampered with
        standins=standins.read_text(encoding="utf-8") if standins is not None else None,
        modules=tuple(component.module for component in config.components),
    )
    state.learner = session
    try:
        yield session
    finally:
        state.learner = None
        try:
            state.forbidden.update(_records(session.forbidden_seen))
        finally:
            session.close()


@pytest.fixture
def rng() -> np.random.Generator:
    """A numpy Generator seeded from --seed and this test's course-relative id."""
    item = _running("rng")
    info = item.stash.get(INFO, None)
    seed = info.seed if info else seed_for(item.config.getoption("seed"), item.nodeid)
    return np.random.default_rng(seed)


@pytest.fixture(autouse=True)
def _autograder_test() -> Iterator[None]:
    """Per grader test: seed the libraries, mark hidden tests, bracket the learner's calls."""
    item = _running("_autograder_test")
    info = item.stash.get(INFO, None)
    if info is None:
        yield
        return
    random.seed(info.seed)
    np.random.seed(info.seed)
    if "torch" in sys.modules:
        # The CPU generator only: torch.manual_seed also queues a seed for every lazily
        # initialised accelerator, formatting a stack trace each time (about 4 ms per test).
        sys.modules["torch"].random.default_generator.manual_seed(info.seed)
    # The learner fixture is session-scoped, so pytest set it up before this function-scoped
    # one for a test that uses it: its session is the run's.
    state = item.config.stash[STATE]
    uses_learner = "learner" in item.fixturenames  # type: ignore[attr-defined]
    session = state.learner if uses_learner else None
    with hidden_context(info.visibility == "hidden"):
        if session is not None:
            session.begin_test(item.nodeid, stage=info.visibility)
        try:
            yield
        finally:
            if session is not None:
                _end_test(item, session, state)


def _end_test(item: pytest.Item, session: Any, state: RunState) -> None:
    """Keep the learner's output of this test (forbidden calls are read once, at the end)."""
    from autograder.runtime.shared.errors import LearnerError

    outcome = item.stash.setdefault(OUTCOME, Outcome())
    if session.answer_bytes >= RELEASE_AFTER_BYTES:
        session.answer_bytes = 0
        outcome.release_memory = True
    try:
        trace = session.end_test()
    except LearnerError:
        return  # the worker died at the very end; the test's own outcome already says so
    outcome.output = trace.output or ""
    # A forbidden call costs the component whose test made it, whichever file it sits in
    # (a helper, or a cheaper component's module): results.forbidden_uses.
    info = item.stash.get(INFO, None)
    if info is not None:
        state.forbidden.update(_records(trace.forbidden, info.component))
        _note_unavailable(item, session, state, info.component)


def _note_unavailable(item: pytest.Item, session: Any, state: RunState, component: str) -> None:
    """Tell the report which parts were placeholders in the tested module, since they failed
    to import on their own: the test involves them (results/dependencies.py)."""
    if not session.unavailable:
        return  # every module imported as it is: nothing to look up, test after test
    by_module = {c.module: c.name for c in state.course.components}
    module = next((c.module for c in state.course.components if c.name == component), None)
    for part in session.unavailable.get(module, ()):
        if part in by_module:
            item.user_properties.append(("unavailable", by_module[part]))


def _records(records: Any, component: str = "") -> set[Any]:
    """The worker's records for the points rule: (api, file, line), with the component whose
    test made the call when one did; a call made inside another forbidden API, a NestedCall."""
    made: set[Any] = set()
    for api, file, line, *within in records or ():
        api, file, line = str(api), str(file), int(line)
        if within:
            made.add(NestedCall(api, file, line, str(within[0]), component))
        else:
            made.add((api, file, line, component) if component else (api, file, line))
    return made
