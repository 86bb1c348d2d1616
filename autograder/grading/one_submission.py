"""Grading one submission in a session whose graders are collected: the one path.

`grade_in_session` is how every command grades a learner: `autograder grade` calls it for
each submission in its own process, a batch (`grade-class`, `check`) in forked harness
children, one learner after another (batch/session_process.py). It

1. finds the submission's package folder (package_dir.py);
2. points the plugin's state at it (pytest_plugin.start_run) and gives it a console of its own,
   DIR/grader.log (console.py);
3. runs the session's collected tests through pytest's own protocol hook, as pytest's test loop
   does (a new LearnerSession and sandboxed worker for the submission);
4. builds its grade once (the points rule over the tests, the notebook component, the
   protected-file changes, the commit: results/build.py) and writes DIR/results.json,
   DIR/summary.md and DIR/junit.xml (reports/writers.py), even when every test failed.

A run that leaves the session unfit for another submission (a test left half run, pytest's
captured output kept on an item, a stop requested) says so in `Graded.reusable`: the caller
then grades the next submission in a fresh session.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from autograder import expected
from autograder.config import CourseConfig
from autograder.grading.console import close_console, submission_console
from autograder.grading.graders_session import pytest_console
from autograder.grading.package_dir import grader_package
from autograder.notebook.submission import NOTEBOOK, notebook_parts, notebook_refusal
from autograder.pytest_plugin import RunState, start_run, torn_down
from autograder.release.manifest import compare_manifest
from autograder.reports import writers
from autograder.results import GradedCommit, GradeResult, Ungraded, build_grade

LOG_FILE = "grader.log"
#: every file a submission's grading writes, pytest's console last
REPORT_FILES = (*writers.REPORT_FILES, LOG_FILE)


@dataclass(frozen=True)
class Options:
    """What every submission of one session is graded with."""

    config: CourseConfig
    seed: int
    test_timeout: float | None
    hidden_included: bool
    components: tuple[str, ...] = ()
    manifest: Path | None = None


@dataclass(frozen=True)
class Submission:
    """One submission to grade: its folder, its name in the reports, where they go."""

    folder: Path
    name: str
    out_dir: Path
    #: how grader.log's header names it (None: its package folder's path)
    shown: str | None = None
    #: the commit a batch graded (None: a folder graded as it is)
    graded: GradedCommit | None = None
    #: folders learner code must not see besides the session's (this one's reports)
    hide: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Graded:
    """A submission's grade (or why it has none), and whether the session can grade more."""

    outcome: GradeResult | Ungraded
    reusable: bool = True


def grade_in_session(
    session: pytest.Session,
    options: Options,
    submission: Submission,
    events: Sequence = (),
    plugins: Sequence[object] = (),
) -> Graded:
    """Grade ``submission`` with the session's collected tests into its out_dir. ``events``:
    what the session's console was told while it collected (GradersSession.events);
    ``plugins``: more pytest plugins for this submission's run (the terminal's progress)."""
    clear_reports(submission.out_dir)
    package_dir = _package_dir(options, submission)
    if isinstance(package_dir, Ungraded):
        return Graded(package_dir)
    submission.out_dir.mkdir(parents=True, exist_ok=True)
    hidden = (*session.config.getoption("hide_path"), *submission.hide)
    state = start_run(
        session,
        package_dir,
        shown=submission.shown,
        hidden=tuple(Path(p).resolve() for p in hidden),
    )
    expected.next_run()  # each impure expected-value function named again in this log
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    start = time.monotonic()
    manager = session.config.pluginmanager
    with (
        (submission.out_dir / LOG_FILE).open("w", encoding="utf-8") as log,
        pytest_console(log),
        submission_console(session, log, events) as reporter,
    ):
        for plugin in plugins:
            manager.register(plugin)
        try:
            complete = _run_tests(session)
        finally:
            for plugin in plugins:
                manager.unregister(plugin)
        duration = time.monotonic() - start
        result = state.graded = _build(options, state, submission, duration, started_at)
        close_console(session, reporter, log, (*_counts(state), duration))
    writers.write_reports(result, submission.out_dir)
    reusable = complete and torn_down() and state.learner is None and not state.captured
    return Graded(result, reusable and not (session.shouldstop or session.shouldfail))


def _package_dir(options: Options, submission: Submission) -> Path | Ungraded:
    """The folder the run's learner code is: the submission's package folder, or with
    `--component notebook` alone (no module test runs) its repository, which then needs only
    the notebook; an Ungraded saying why there is none."""
    config = options.config
    if options.components and set(options.components) <= {NOTEBOOK}:
        refusal = notebook_refusal(config, submission.folder)
        if refusal:
            return Ungraded(submission.name, refusal)
        return config.submission_root(submission.folder)
    return grader_package(config, submission.folder, submission.name)


def _build(
    options: Options, state: RunState, submission: Submission, duration: float, started_at: str
) -> GradeResult:
    """The submission's grade: what its tests found, its notebook (unless other components
    were asked for), its protected-file changes (with a manifest), the commit graded."""
    config = options.config
    notebooks = []
    if not options.components or NOTEBOOK in options.components:  # docs/instructor/notebook.md
        notebooks = notebook_parts(config, submission.folder, submission.out_dir, hide=state.hidden)
    changes = []
    if options.manifest is not None:
        root = config.submission_root(submission.folder)
        changes = [
            {**vars(c), "sentence": c.sentence} for c in compare_manifest(options.manifest, root)
        ]
    return build_grade(
        config,
        state.results,
        submission=submission.name,
        seed=options.seed,
        hidden_included=options.hidden_included,
        forbidden=state.forbidden,
        grader_errors=state.grader_errors,
        duration=duration,
        started_at=started_at,
        notebooks=notebooks,
        protected_changes=changes,
        graded=submission.graded,
        test_timeout=options.test_timeout,
        review=state.review,
        chosen=options.components,
    )


def _counts(state: RunState) -> tuple[int, int]:
    """(passed, failed) tests of the run."""
    failed = sum(not t.passed for t in state.results)
    return len(state.results) - failed, failed


def _run_tests(session: pytest.Session) -> bool:
    """The session's collected tests through pytest's protocol hook, each told the next, as
    pytest's own test loop runs them; True once the last one's protocol is over (with the
    next item None, so every fixture, the learner's session among them, is torn down)."""
    items = session.items
    for index, item in enumerate(items):
        following = items[index + 1] if index + 1 < len(items) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
    return True


def clear_reports(out_dir: Path) -> None:
    """Never leave last run's grade beside this run's failure."""
    for stale in REPORT_FILES:
        (out_dir / stale).unlink(missing_ok=True)


def cannot_grade(config: CourseConfig, submission: Submission, reason: str) -> Ungraded:
    """The Ungraded of a submission the graders cannot run for (``reason``), or of one without
    a package folder, which says so first; its old reports removed."""
    clear_reports(submission.out_dir)
    package_dir = grader_package(config, submission.folder, submission.name)
    if isinstance(package_dir, Ungraded):
        return package_dir
    return Ungraded(submission.name, reason)
