"""The autograder's pytest plugin (entry point `pytest11: autograder`).

Active when a course.toml is found (`--course FILE`, else searched upward from the first test
path, the invocation folder, then pytest's rootdir); inert otherwise. It only touches *grader
tests*: tests under the course's `visible_tests` or `hidden_tests` folder.

What it adds:
* options `--submission PATH` (default: the course root, i.e. your own repository), `--course`,
  `--seed N` (default 0) and `--test-timeout S`;
* markers `weight(n)` and one per component (`pytest -m softmax` runs one component); every
  grader test carries exactly one component marker, else collection stops with a sentence;
* fixtures `course`, `learner` (one LearnerSession per run), `rng` (seeded per test) and an
  autouse fixture that seeds numpy, random and torch per test, marks hidden tests for the
  feedback helpers and brackets each test that uses `learner` with begin_test/end_test;
* failure reports that are the learner-facing sentence only: a GradingFailure or LearnerError
  shows its message, never a traceback into grader code; any other exception is reported as an
  internal grader error;
* a ResultCollector the grade command passes to pytest.main to get TestResults back;
* the course root on sys.path for the run, so graders can import their shared helpers.

PYTEST_DONT_REWRITE: a grade imports this module before pytest starts (for the
ResultCollector), so pytest could not assertion-rewrite it anyway and warned about it in every
learner's grader.log; it has no assertions to rewrite.
"""

from __future__ import annotations

import gc
import hashlib
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autograder.config import (
    CourseConfig,
    CourseConfigError,
    OptionError,
    SubmissionError,
    check_timeout,
    find_course_file,
    load_course,
)
from autograder.feedback import GradingFailure, hidden_context
from autograder.reports.sanitize import cap, clean, first_sentence
from autograder.results import (
    TAMPERING,
    ForbiddenUse,
    GradeResult,
    TestResult,
    build_grade_result,
    points,
)

GRADER_ERROR = (
    "The grader itself failed in {test}; this is not your fault — tell your instructor: "
    "{type}: {message}"
)
GRADER_ERROR_HIDDEN_DETAIL = "(the details, which could reveal hidden inputs, are in the log)"
PLAIN_ASSERT_HIDDEN = "A hidden check in {test} failed."
NO_MARKER = (
    "{nodeid} carries no component marker; mark it with exactly one of: {markers} "
    "(e.g. @pytest.mark.{example})."
)
MANY_MARKERS = (
    "{nodeid} carries {count} component markers ({found}); a grader test belongs to exactly one "
    "component."
)
BAD_WEIGHT = (
    "{nodeid} has @pytest.mark.weight{args}; expected one positive number, "
    "e.g. @pytest.mark.weight(2)."
)
NO_COURSE = (
    "The {fixture} fixture needs a course, but no course.toml was found here or above; "
    "pass --course FILE."
)
COLLECT_ERROR = "The grader file {where} could not be collected: {detail}"
LEARNER_OUTPUT = "Your code printed"
HEADER = "autograder: course {course} ({path}); submission {submission}; seed {seed}"
LOG_WIDTH = 80  # characters in a line of grader.log (pytest's console): --console-width


@dataclass(frozen=True)
class GraderInfo:
    """What the plugin knows about one grader test."""

    component: str
    weight: float
    visibility: str  # "visible" | "hidden"
    name: str
    seed: int


@dataclass
class _RunState:
    course: CourseConfig
    submission: Path
    seed: int
    test_timeout: float | None
    #: folders besides the course that learner code must not see (--hide-path)
    hidden: tuple[Path, ...] = ()
    results: list[TestResult] = field(default_factory=list)
    grader_errors: list[str] = field(default_factory=list)
    #: (api, file, line), (api, file, line, component) for the component whose test made the
    #: call, or a ForbiddenUse of the static check (static_check.check_package)
    forbidden: set[Any] = field(default_factory=set)
    #: the static check's flags for the instructor's review
    review: list[Any] = field(default_factory=list)
    usage_errors: list[str] = field(default_factory=list)
    #: (len(results), forbidden, grade): the grade pytest_terminal_summary built from them
    graded: tuple[int, frozenset, GradeResult] | None = None


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


@dataclass
class _Outcome:
    """The first failing phase of a test (or the passing call), kept until teardown."""

    status: str = "passed"
    message: str = ""
    error_kind: str = ""
    report: Any = None
    duration: float = 0.0
    output: str = ""
    ran: bool = False
    #: learner outputs of many bytes came during the test: free memory once it is reported
    release_memory: bool = False


STATE = pytest.StashKey[_RunState]()
INFO = pytest.StashKey[GraderInfo]()
OUTCOME = pytest.StashKey[_Outcome]()


def active_course(config: pytest.Config) -> CourseConfig | None:
    """The course this pytest run grades, or None when the plugin is inert."""
    state = config.stash.get(STATE, None)
    return state.course if state else None


def seed_for(base: int, key: str) -> int:
    """A seed in [0, 2**32) from the run's seed and a stable key (course-relative nodeid)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return (base + int.from_bytes(digest[:8], "big")) % 2**32


# Options, configuration, header -------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograder", "grading a submission against a course")
    group.addoption(
        "--submission",
        metavar="PATH",
        help="the repository (or package folder) to grade; default: the course root",
    )
    group.addoption(
        "--course", metavar="FILE", help="the course.toml; default: the nearest one above"
    )
    group.addoption(
        "--seed", type=int, default=0, metavar="N", help="base seed for every test (default 0)"
    )
    group.addoption(
        "--hide-path",
        action="append",
        default=[],
        metavar="PATH",
        help="a folder learner code must not see, besides the course (repeatable)",
    )
    group.addoption(
        "--console-width",
        type=int,
        default=None,
        metavar="N",
        help="characters per line of pytest's console (default: the terminal's width)",
    )
    group.addoption(
        "--test-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds of learner code per test (default: course.toml [limits] test_timeout)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "weight(n): this grader test's share of its component's points, relative to the "
        "component's other tests (default 1)",
    )
    course = _find_course(config)
    if course is None:
        return
    for component in course.components:
        config.addinivalue_line(
            "markers",
            f"{component.name}: a grader test of {component.title} ({component.points:g} points)",
        )
    # Graders import their helpers from the course root (e.g. tests.graders.support), as
    # pytest's `pythonpath` ini option would allow; undone when the run ends.
    root = str(course.root)
    if root not in sys.path:
        sys.path.insert(0, root)
        config.add_cleanup(lambda: sys.path.remove(root) if root in sys.path else None)
    _one_torch_thread(config)
    try:
        check_timeout(config.getoption("test_timeout"))
    except OptionError as error:
        raise pytest.UsageError(str(error).replace("--timeout", "--test-timeout", 1)) from None
    submission = config.getoption("submission")
    config.stash[STATE] = _RunState(
        course=course,
        submission=Path(submission).resolve() if submission else course.root,
        seed=config.getoption("seed"),
        test_timeout=config.getoption("test_timeout"),
        hidden=tuple(Path(p).resolve() for p in config.getoption("hide_path")),
    )


def next_submission(session: pytest.Session, submission: Path) -> None:
    """Before the session's collected tests run again, on ``submission`` (a package folder):
    forget what this plugin kept of the previous run (its results, grader errors, forbidden
    calls, each test's outcome), so that the run is as in a session fresh from collection. A
    batch's harness child grades several learners in one pytest session (batch/session.py).
    """
    state = session.config.stash[STATE]
    session.config.stash[STATE] = _RunState(
        course=state.course,
        submission=submission,
        seed=state.seed,
        test_timeout=state.test_timeout,
        hidden=state.hidden,
    )
    for item in session.items:
        if OUTCOME in item.stash:
            del item.stash[OUTCOME]


def torn_down() -> bool:
    """Whether no test of this plugin's is running (none left half run by an error)."""
    return not _RUNNING


def _one_torch_thread(config: pytest.Config) -> None:
    """The graders' own torch computations use tiny tensors: one intra-op thread, restored at
    the end. torch's default (a thread per core) makes every small operation wait on a second
    thread, which costs milliseconds each when the cores are busy (a batch runs one harness
    per core): most of a learner's harness CPU time, by benchmarks/README.md's profile."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    config.add_cleanup(lambda: torch.set_num_threads(before))


def _find_course(config: pytest.Config) -> CourseConfig | None:
    explicit = config.getoption("course")
    try:
        if explicit:
            return load_course(Path(explicit))
        starts = [Path(a.split("::")[0]) for a in config.args[:1]]
        starts += [config.invocation_params.dir, config.rootpath]
        for start in starts:
            try:
                path = find_course_file(start if start.exists() else start.parent)
            except CourseConfigError:
                continue
            return load_course(path)
    except CourseConfigError as error:
        raise pytest.UsageError(str(error)) from None
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """--console-width (grading passes LOG_WIDTH): pytest's console as wide wherever it runs.
    pytest fits it to the terminal (or COLUMNS) of the process, so the same learner's
    grader.log differed between their machine, their CI and the instructor's batch; and it
    asked for that width after every test. Before the header is written, hence tryfirst. A
    learner's own pytest run keeps their terminal's width."""
    width = session.config.getoption("console_width")
    if width is not None and session.config.pluginmanager.get_plugin("terminalreporter"):
        session.config.get_terminal_writer().fullwidth = width


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash.get(STATE, None)
    if state is None:
        return []
    from autograder.runtime.harness import isolation

    return [
        HEADER.format(
            course=state.course.course.name,
            path=state.course.path,
            submission=state.submission,
            seed=state.seed,
        ),
        isolation.header_line(state.course.limits.disk_mb),
    ]


# Collection ----------------------------------------------------------------------------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    names = [c.name for c in state.course.components]
    problems = []
    for item in items:
        visibility = _visibility(state.course, Path(item.path))
        if visibility is None:
            continue
        found = [n for n in names if item.get_closest_marker(n) is not None]
        if len(found) != 1:
            template = NO_MARKER if not found else MANY_MARKERS
            problems.append(
                template.format(
                    nodeid=item.nodeid,
                    markers=", ".join(names),
                    example=names[0],
                    count=len(found),
                    found=", ".join(found),
                )
            )
            continue
        weight = _weight(item)
        if weight is None:
            mark = item.get_closest_marker("weight")
            args = "(" + ", ".join(map(repr, mark.args if mark else ())) + ")"
            problems.append(BAD_WEIGHT.format(nodeid=item.nodeid, args=args))
            continue
        key = f"{Path(item.path).resolve().relative_to(state.course.root).as_posix()}::{item.name}"
        item.stash[INFO] = GraderInfo(
            component=found[0],
            weight=weight,
            visibility=visibility,
            name=_display_name(item),
            seed=seed_for(state.seed, key),
        )
        _skip_replaced_tracebacks(item)
        # pytest computes an item's location (its file relative to the rootdir, its line: the
        # source of its function is read) the first time it reports it, and caches it on the
        # item. Computed here, at collection, a batch's session process does it once for the
        # whole class, and each learner's forked child inherits it.
        item.location  # noqa: B018
    if problems:
        state.usage_errors.extend(problems)
        raise pytest.UsageError(*problems)
    _in_course_order(items, names)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Each test's hook relay (item.ihook, asked by pytest several times per test) kept per
    folder once the graders are collected. pytest works it out anew on every call, and for a
    test outside a folder with a conftest.py (the visible graders beside the hidden ones') it
    built a new relay that looked every hook up again: ~1570 per learner, ~3% of a batch
    learner's harness time under cProfile. Collection has loaded every conftest.py by now, so
    the answer cannot change; plugins registered later are still called (a relay looks its
    hooks up in the plugin manager)."""
    if session.config.stash.get(STATE, None) is None:
        return
    relays: dict[Any, Any] = {}
    find = session.gethookproxy

    def gethookproxy(fspath: Any) -> Any:
        relay = relays.get(fspath)
        if relay is None:
            relay = relays[fspath] = find(fspath)
        return relay

    session.gethookproxy = gethookproxy  # type: ignore[method-assign]


def _in_course_order(items: list[pytest.Item], names: list[str]) -> None:
    """Every visible grader test runs before every hidden one; within each, component by
    component in course.toml's order (softmax before attention...), as the course builds them,
    not in the files' alphabetical order; within a component, and for other tests, pytest's
    order is kept. Hidden tests last: learner code that keeps a hidden input in memory (in
    builtins, say) cannot show it in a later visible test's message or printed output, which
    the learner sees in full."""
    rank = {name: index for index, name in enumerate(names)}

    def key(item: pytest.Item) -> tuple[bool, int]:
        info = item.stash.get(INFO, None)
        if info is None:
            return (False, len(rank))
        return (info.visibility == "hidden", rank[info.component])

    items.sort(key=key)


def _skip_replaced_tracebacks(item: pytest.Item) -> None:
    """pytest formats a failure's traceback (parsing the source file of every frame) before
    pytest_runtest_makereport below replaces the first failure of a grader test with its
    learner-facing message. For a submission that fails most tests that discarded work was most
    of the harness's time (benchmarks/README.md); it is skipped, and only it: a later failure
    of the same test (a teardown error) keeps pytest's full traceback."""
    full = item._repr_failure_py

    def repr_failure_py(excinfo: Any, style: Any = None) -> Any:
        outcome = item.stash.get(OUTCOME, None)
        if outcome is None or outcome.status == "passed":
            return "(replaced by the grader's message)"
        return full(excinfo, style)

    item._repr_failure_py = repr_failure_py  # type: ignore[method-assign]


def _visibility(course: CourseConfig, path: Path) -> str | None:
    path = path.resolve()
    for visibility, folder in (("visible", course.visible_tests), ("hidden", course.hidden_tests)):
        if folder is not None and path.is_relative_to(folder):
            return visibility
    return None


def _weight(item: pytest.Item) -> float | None:
    mark = item.get_closest_marker("weight")
    if mark is None:
        return 1.0
    if len(mark.args) != 1 or mark.kwargs or isinstance(mark.args[0], bool):
        return None
    value = mark.args[0]
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _display_name(item: pytest.Item) -> str:
    """The test's docstring first line (its name when it has none), with its parameters."""
    doc = (getattr(getattr(item, "function", None), "__doc__", None) or "").strip()
    name = doc.split("\n", 1)[0].strip() or getattr(item, "originalname", item.name)
    callspec = getattr(item, "callspec", None)
    return f"{name} [{callspec.id}]" if callspec is not None else name


# Fixtures ------------------------------------------------------------------------------------
#
# No fixture here takes pytest's `request`: for every fixture that does, pytest builds a fixture
# definition for `request` each time a test sets it up (inspecting a function's signature), and
# once more for the test itself; with the per-test fixtures below that was about 770 per learner,
# some 5% of a batch learner's harness time. They find the test being run through the item that
# pytest_runtest_protocol below keeps, and its run's state through the item's config.

_RUNNING: list[pytest.Item] = []  # the tests being run, innermost last (a run inside a test)

NO_ITEM = (
    "The {fixture} fixture is set up outside a test: the autograder plugin finds the test "
    "through pytest_runtest_protocol, which did not run for it."
)


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


#: Answer bytes read from the worker after which the harness frees memory at the end of a test.
RELEASE_AFTER_BYTES = 64 * 2**20


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


def _state(config: pytest.Config, fixture: str) -> _RunState:
    state = config.stash.get(STATE, None)
    if state is None:
        pytest.fail(NO_COURSE.format(fixture=fixture), pytrace=False)
    return state


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
    )
    try:
        yield session
    finally:
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
    # The item's own request (what `request` is for the test): set up first if need be, as
    # request.getfixturevalue did; a session fixture, it is cached and costs no new definition.
    uses_learner = "learner" in item.fixturenames  # type: ignore[attr-defined]
    session = item._request.getfixturevalue("learner") if uses_learner else None  # type: ignore[attr-defined]
    with hidden_context(info.visibility == "hidden"):
        if session is not None:
            session.begin_test(item.nodeid)
        try:
            yield
        finally:
            if session is not None:
                _end_test(item, session)


def _end_test(item: pytest.Item, session: Any) -> None:
    """Keep the learner's output of this test (forbidden calls are read once, at the end)."""
    from autograder.runtime.shared.errors import LearnerError

    outcome = item.stash.setdefault(OUTCOME, _Outcome())
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
    info, state = item.stash.get(INFO, None), item.config.stash[STATE]
    for api, file, line in _records(trace.forbidden):
        if info is not None:
            state.forbidden.add((api, file, line, info.component))


def _records(records: Any) -> set[tuple[str, str, int]]:
    return {(str(api), str(file), int(line)) for api, file, line in records or ()}


# Reports -------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    info = item.stash.get(INFO, None)
    if info is None:
        return report
    state = item.config.stash[STATE]
    outcome = item.stash.setdefault(OUTCOME, _Outcome())
    outcome.duration += report.duration
    if report.when == "call":
        outcome.ran = not report.skipped
    if report.failed and outcome.status == "passed":
        message, kind = _explain(call.excinfo, item, state)
        report.longrepr = _Sentence(message)  # type: ignore[assignment]
        outcome.status, outcome.message, outcome.error_kind = "failed", message, kind
        outcome.report = report
        outcome.ran = True
    if report.when == "teardown":
        _finish(item, info, outcome, state)
    return report


def _explain(excinfo: Any, item: pytest.Item, state: _RunState) -> tuple[str, str]:
    """(learner-facing message, error kind) for the exception that failed a phase."""
    from autograder.runtime.shared.errors import LearnerError

    error = excinfo.value if excinfo is not None else None
    if isinstance(error, GradingFailure):
        return error.message, "failed"
    if isinstance(error, LearnerError):
        if error.kind == "tampered":  # the whole component, as a forbidden use would
            component = item.stash[INFO].component
            state.forbidden.add(ForbiddenUse(TAMPERING, "", 0, component, error.feedback))
        return error.feedback, error.kind
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


def _finish(item: pytest.Item, info: GraderInfo, outcome: _Outcome, state: _RunState) -> None:
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
        )
    )


@pytest.hookimpl(wrapper=True, tryfirst=True, specname="pytest_terminal_summary")
def pytest_terminal_summary_teardown_index(
    terminalreporter: Any, config: pytest.Config
) -> Iterator[None]:
    """While pytest writes its summary: its lookup of a failed test's teardown reports answered
    from an index built once. pytest scans every report of the run for every failure (quadratic:
    a learner failing all 116 tests cost ~8% of a batch learner's harness time under cProfile).
    Same reports, same order, so grader.log is unchanged; a pytest without the lookup is left
    as it is. (pytest registers only functions named pytest_*, hence the name and specname.)"""
    lookup = getattr(type(terminalreporter), "_get_teardown_reports", None)
    if config.stash.get(STATE, None) is None or lookup is None:
        return (yield)
    index: dict[Any, list[Any]] = {}
    for report in terminalreporter.getreports(""):
        if report.when == "teardown":
            index.setdefault(report.id, []).append(report)
    terminalreporter._get_teardown_reports = lambda node_id: list(index.get(node_id, ()))
    try:
        return (yield)
    finally:
        del terminalreporter._get_teardown_reports


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """When graders ran: the points per component that ran, as the grade would count them."""
    state = config.stash.get(STATE, None)
    if state is None or not state.results:
        return
    result = build_grade_result(
        state.course,
        state.results,
        submission=str(state.submission),
        seed=state.seed,
        hidden_included=any(t.visibility == "hidden" for t in state.results),
        forbidden=state.forbidden,
        review=state.review,
    )
    state.graded = (len(state.results), frozenset(state.forbidden), result)
    terminalreporter.section("autograder points")
    for c in result.components:
        if c.total:
            line = f"{c.title}: {points(c.score)} / {points(c.max_score)} ({c.passed}/{c.total})"
            terminalreporter.write_line(line)
    for use in result.forbidden:
        terminalreporter.write_line(use.sentence)


# The grade command's collector ---------------------------------------------------------------


class ResultCollector:
    """Pass to pytest.main(args, plugins=[collector]); afterwards it holds what the run saw."""

    def __init__(self) -> None:
        self.results: list[TestResult] = []
        self.grader_errors: list[str] = []
        self.forbidden: set[Any] = set()  # as _RunState.forbidden
        self.review: list[Any] = []  # as _RunState.review
        self.errors: list[str] = []  # why the graders could not run (collection, usage)
        self.graded: GradeResult | None = None  # pytest_terminal_summary's, for these results
        self._graded_course: Path | None = None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            lines = [ln for ln in str(report.longrepr).strip().splitlines() if ln.strip()]
            last = lines[-1].removeprefix("E").strip() if lines else "unknown error"
            detail = clean(last, 500)
            self.errors.append(COLLECT_ERROR.format(where=report.nodeid or ".", detail=detail))

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.take(config)

    def take(self, config: pytest.Config) -> None:
        """Keep what the run's tests found (at the end of a run, or of a batch child's tests)."""
        state = config.stash.get(STATE, None)
        if state is None:
            return
        self.results = list(state.results)
        self.grader_errors = list(state.grader_errors)
        self.forbidden = set(state.forbidden)
        self.review = list(state.review)
        self.errors.extend(state.usage_errors)
        graded = state.graded
        if graded is not None and graded[:2] == (len(state.results), frozenset(state.forbidden)):
            self.graded, self._graded_course = graded[2], state.course.path

    def grade_result(
        self,
        config: CourseConfig,
        *,
        submission: str,
        seed: int,
        hidden_included: bool,
        duration: float,
        started_at: str,
    ) -> GradeResult:
        """build_grade_result over what the run saw. The points rule runs once per run: when
        pytest_terminal_summary applied it to these results for grader.log (same course), its
        grade is reused with this call's fields (about 1% of a batch learner's harness time)."""
        if self.graded is not None and self._graded_course == config.path:
            return replace(
                self.graded,
                submission=submission,
                seed=seed,
                hidden_included=hidden_included,
                grader_errors=list(self.grader_errors),
                duration=duration,
                started_at=started_at,
            )
        return build_grade_result(
            config,
            self.results,
            submission=submission,
            seed=seed,
            hidden_included=hidden_included,
            forbidden=self.forbidden,
            grader_errors=self.grader_errors,
            duration=duration,
            started_at=started_at,
            review=self.review,
        )
