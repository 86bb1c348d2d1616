"""What the plugin keeps for a run: the course, the submission, and what its tests found.

A run is one pass of the grader tests over one submission. pytest runs one per session; a
grading run (autograder/grading) runs the collected tests once per submission, after
`start_run` points the state at it. Everything is kept in pytest's stashes (`config.stash`,
`item.stash`), never in attributes of pytest's objects.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from autograder.config import CourseConfig
from autograder.results import GradeResult, TestResult

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
class Outcome:
    """The first failing phase of a test (or the passing call), kept until teardown."""

    status: str = "passed"
    message: str = ""
    error_kind: str = ""
    #: (message, kind) of a first failure already explained where it was raised (outcomes.py)
    explained: tuple[str, str] | None = None
    report: Any = None
    duration: float = 0.0
    output: str = ""
    ran: bool = False
    #: learner outputs of many bytes came during the test: free memory once it is reported
    release_memory: bool = False


@dataclass
class RunState:
    """One run of the grader tests over one submission."""

    course: CourseConfig
    submission: Path
    seed: int
    test_timeout: float | None
    #: folders besides the course that learner code must not see (--hide-path)
    hidden: tuple[Path, ...] = ()
    #: how grader.log's header names the submission (None: its path)
    shown: str | None = None
    results: list[TestResult] = field(default_factory=list)
    grader_errors: list[str] = field(default_factory=list)
    #: (api, file, line), (api, file, line, component) for the component whose test made the
    #: call, or a ForbiddenUse of the static check (static_check.check_package)
    forbidden: set[Any] = field(default_factory=set)
    #: the static check's flags for the instructor's review
    review: list[Any] = field(default_factory=list)
    #: why the graders cannot run at all (a bad marker, say): collection stops with these
    usage_errors: list[str] = field(default_factory=list)
    #: the learner's session while its fixture is set up (fixtures.py); None once closed
    learner: Any = None
    #: a test's report carried pytest's captured output, which pytest keeps on the item
    #: for every later run of it: the session can grade no other submission
    captured: bool = False
    #: the grade of this run, when the grading run built it before pytest's summary
    graded: GradeResult | None = None


STATE = pytest.StashKey[RunState]()
INFO = pytest.StashKey[GraderInfo]()
OUTCOME = pytest.StashKey[Outcome]()


def active_course(config: pytest.Config) -> CourseConfig | None:
    """The course this pytest run grades, or None when the plugin is inert."""
    state = config.stash.get(STATE, None)
    return state.course if state else None


def run_state(config: pytest.Config) -> RunState | None:
    """The state of the current run (None when the plugin is inert)."""
    return config.stash.get(STATE, None)


def start_run(
    session: pytest.Session,
    submission: Path,
    *,
    shown: str | None = None,
    hidden: tuple[Path, ...] | None = None,
) -> RunState:
    """Before the session's collected tests run again, on ``submission`` (a package folder):
    a new run state (nothing of the previous run's results, grader errors, forbidden calls or
    test outcomes), as in a session fresh from collection. ``shown``: how grader.log's header
    names the submission; ``hidden``: the run's folders learner code must not see (default:
    the session's --hide-path)."""
    state = session.config.stash[STATE]
    fresh = RunState(
        course=state.course,
        submission=submission,
        seed=state.seed,
        test_timeout=state.test_timeout,
        hidden=state.hidden if hidden is None else hidden,
        shown=shown,
    )
    session.config.stash[STATE] = fresh
    for item in session.items:
        if OUTCOME in item.stash:
            del item.stash[OUTCOME]
        item.user_properties = []
    session.testsfailed = 0
    return fresh
