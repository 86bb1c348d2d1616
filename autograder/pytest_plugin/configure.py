"""The plugin's options, its configuration from course.toml, and grader.log's header line.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autograder.config import (
    CourseConfig,
    CourseConfigError,
    OptionError,
    check_timeout,
    find_course_file,
    load_course,
)
from autograder.pytest_plugin.state import HEADER, STATE, RunState


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
    config.addinivalue_line(
        "markers",
        "uses(*components): the components (course.toml depends_on) whose learner code the "
        "tested call runs; a grader that sets a stand-in in place of one records "
        "('replaced', component) in the item's user_properties (results/dependencies.py)",
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
    config.stash[STATE] = RunState(
        course=course,
        submission=Path(submission).resolve() if submission else course.root,
        seed=config.getoption("seed"),
        test_timeout=config.getoption("test_timeout"),
        hidden=tuple(Path(p).resolve() for p in config.getoption("hide_path")),
    )


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
    set_console_width(session.config)


def set_console_width(config: pytest.Config) -> None:
    """The console's width as --console-width says (nothing without it, or without a console)."""
    width = config.getoption("console_width")
    if width is not None and config.pluginmanager.get_plugin("terminalreporter"):
        config.get_terminal_writer().fullwidth = width


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash.get(STATE, None)
    if state is None:
        return []
    from autograder.runtime.harness import isolation

    return [
        HEADER.format(
            course=state.course.course.name,
            path=state.course.path,
            submission=state.shown or state.submission,
            seed=state.seed,
        ),
        isolation.header_line(state.course.limits.disk_mb),
    ]
