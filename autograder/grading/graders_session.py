"""One pytest session over the course's graders: configured and collected once, then handed over.

`run_graders` runs pytest.main over the visible (and hidden) grader folders with a
GradersSession plugin. pytest parses the options, loads the plugins and collects the graders as
usual; where it would run the tests, GradersSession calls `grade_all(session)` instead, which
grades submissions one after another in this process (`autograder grade`) or in forked
children (a batch). When the graders cannot run at all (a collection error, a bad marker, no
tests), `grade_all` is never called and `not_started` says why in one sentence.

GradersSession also keeps what pytest's console showed while it collected (its collect
reports, deselected tests and warnings), so that each submission's console (console.py)
starts as a fresh session's would.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from autograder.config import CourseConfig
from autograder.learner_text import clean
from autograder.notebook.submission import NOTEBOOK
from autograder.pytest_plugin import LOG_WIDTH, run_state

COLLECT_ERROR = "The grader file {where} could not be collected: {detail}"
PYTEST_FAILED = (
    "The graders could not run for {name} (pytest exit status {code}); see {log} for details."
)
NO_TESTS = "No grader tests were collected from {folders}; check the course's test folders."

#: Something pytest's console was told while the graders were collected, to tell again.
Event = Callable[[Any], None]


class GradersSession:
    """pytest plugin: where pytest would run the collected tests, call ``grade_all(session)``.
    ``empty_ok``: call it even when no test was collected (a grade of the notebook alone)."""

    def __init__(self, grade_all: Callable[[pytest.Session], None], empty_ok: bool = False):
        self.grade_all = grade_all
        self.empty_ok = empty_ok
        self.started = False
        self.interrupted = False
        self.errors: list[str] = []  # why the graders could not run (collection, usage)
        self.error: Exception | None = None  # what grade_all raised
        self.events: list[Event] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self.events.append(lambda reporter: reporter.pytest_collectreport(report))
        if report.failed:
            lines = [ln for ln in str(report.longrepr).strip().splitlines() if ln.strip()]
            last = lines[-1].removeprefix("E").strip() if lines else "unknown error"
            detail = clean(last, 500)
            self.errors.append(COLLECT_ERROR.format(where=report.nodeid or ".", detail=detail))

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.events.append(lambda reporter: reporter.pytest_deselected(items))

    def pytest_warning_recorded(self, warning_message: Any, when: str, nodeid: str) -> None:
        if not self.started:  # a test's own warnings are its run's
            self.events.append(
                lambda reporter: reporter.pytest_warning_recorded(warning_message, nodeid)
            )

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        if session.testsfailed or session.config.option.collectonly:
            return None  # pytest reports the collection errors; not_started says why
        if not session.items and not self.empty_ok:
            return None
        self.started = True
        try:
            self.grade_all(session)
        except Exception as error:  # raised again by run_graders, once pytest has ended
            self.error = error
        return True

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        # pytest stops on collection errors with a subclass of KeyboardInterrupt too
        self.interrupted = excinfo.type is KeyboardInterrupt

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        state = run_state(config)
        if state is not None:
            self.errors.extend(state.usage_errors)


def run_graders(
    config: CourseConfig,
    folders: Sequence[Path],
    args: list[str],
    plugin: GradersSession,
    console: Any,
) -> int:
    """pytest.main over the grader folders with ``plugin``, pytest's console (and anything
    printed meanwhile) into ``console``; its exit status. What the plugin's ``grade_all``
    raised is raised here (a report that could not be written, say), not turned into pytest's
    internal error."""
    with pytest_console(console), own_grader_packages(list(folders), config.root):
        code = int(pytest.main(args, plugins=[plugin]))
    if plugin.error is not None:
        raise plugin.error
    return code


def not_started(plugin: GradersSession, code: int, folders: Sequence[Path], name: str, log) -> str:
    """Why the graders did not run: one sentence."""
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        return NO_TESTS.format(folders=", ".join(map(str, folders)))
    if plugin.errors:
        return plugin.errors[0]
    return PYTEST_FAILED.format(name=name, code=code, log=log)


def pytest_args(
    config: CourseConfig,
    folders: Sequence[Path],
    *,
    submission: Path,
    seed: int,
    test_timeout: float | None,
    components: Sequence[str] = (),
    hide: Sequence[Path] = (),
) -> list[str]:
    """pytest's command line for grading `submission` (its package folder). ``hide``: folders
    learner code must not see besides the course (where reports and caches are written)."""
    args = [
        *map(str, folders),
        f"--course={config.path}",
        f"--submission={submission}",
        f"--seed={seed}",
        f"--rootdir={config.root}",
        "--strict-markers",
        # Only pytest's own plugins and ours: a plugin that happens to be installed beside the
        # grader (pytest-randomly, pytest-xdist, ...) must not change a grade or slow it down.
        "--disable-plugin-autoload",
        "-p",
        "autograder.pytest_plugin",
        "-p",
        "no:cacheprovider",
        # Learner code logs in the worker, never here; pytest's log capture would add and
        # remove its handlers around every test phase (a tenth of a warm learner's time).
        "-p",
        "no:logging",
        "--color=no",
        # Very verbose: the short summary (-rfE) shows each failure's whole message. At -v it
        # cut them to the terminal's width (to nothing at 80 columns) except on a CI machine,
        # so a learner's grader.log differed between their CI and their own machine.
        "-vv",
        "-rfE",
        f"--console-width={LOG_WIDTH}",  # the same log on every machine
    ]
    if test_timeout is not None:
        args.append(f"--test-timeout={test_timeout}")
    modules = [c for c in components if c != NOTEBOOK]  # the notebook is no pytest marker
    if modules:
        args += ["-m", " or ".join(modules)]
    elif components:  # the notebook alone: every module test deselected
        args += ["-m", "not (" + " or ".join(c.name for c in config.components) + ")"]
    args += [f"--hide-path={path}" for path in hide]
    return args


@contextmanager
def pytest_console(stream) -> Iterator[None]:
    """pytest's console output (and anything else printed meanwhile) into `stream`."""
    with redirect_stdout(stream), redirect_stderr(stream):
        yield


@contextmanager
def own_grader_packages(folders: list[Path], root: Path) -> Iterator[None]:
    """Run pytest with this course's grader packages, not another course's that this process
    imported earlier under the same top-level name (both may call theirs `tests`): pytest would
    otherwise look for this course's grader files inside the other package and fail to find
    them. The other course's modules are put back afterwards."""
    tops = set()
    for folder in folders:
        top = Path(folder).resolve()
        while (top.parent / "__init__.py").is_file():
            top = top.parent
        if (top / "__init__.py").is_file():
            tops.add(top.name)
    root = Path(root).resolve()

    def ours(name: str) -> bool:
        file = getattr(sys.modules[name], "__file__", None)
        return file is not None and Path(file).resolve().is_relative_to(root)

    names = [n for n in sys.modules if n.split(".", 1)[0] in tops]
    if all(map(ours, names)):
        yield
        return
    before = {name: sys.modules[name] for name in names}
    for name in names:
        if not ours(name):
            del sys.modules[name]
    try:
        yield
    finally:
        for name in [n for n in sys.modules if n.split(".", 1)[0] in tops]:
            del sys.modules[name]
        sys.modules.update(before)
