"""Grading submissions one after another in this process (`autograder grade`).

One pytest session collects the graders; each submission is then graded in it
(one_submission.grade_in_session), in the order given. A submission whose run leaves the
session unfit for another starts a fresh session for the rest. When the graders cannot run,
every submission left gets an Ungraded with the sentence saying why, and a grader.log holding
pytest's console (where the collection error is).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext, redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from autograder.grading.graders_session import (
    GradersSession,
    not_started,
    pytest_args,
    run_graders,
)
from autograder.grading.one_submission import (
    LOG_FILE,
    Options,
    Submission,
    cannot_grade,
    grade_in_session,
)
from autograder.grading.package_dir import grader_package
from autograder.results import GradeResult, Ungraded

#: status(submission) -> a context whose value is a pytest plugin showing progress, or None
Status = Callable[[Submission], AbstractContextManager]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while ``submission`` was graded (pytest swallowed it; the command says so)."""

    def __init__(self, submission: Submission) -> None:
        super().__init__(submission.name)
        self.submission = submission


def grade_in_process(
    options: Options,
    folders: Sequence[Path],
    submissions: Sequence[Submission],
    *,
    graded: Callable[[Submission, GradeResult | Ungraded], None],
    status: Status | None = None,
) -> None:
    """Grade each submission in turn; ``graded(submission, outcome)`` as each is done, with
    this command's own standard output and error (pytest's console is elsewhere meanwhile).
    ``status``: a per-submission progress context (the terminal's spinner)."""
    out, err = sys.stdout, sys.stderr

    def told(submission: Submission, outcome: GradeResult | Ungraded) -> None:
        with redirect_stdout(out), redirect_stderr(err):
            graded(submission, outcome)

    left = list(submissions)
    while left:
        left = _one_session(options, folders, left, told, status or _no_status)


def _one_session(
    options: Options,
    folders: Sequence[Path],
    submissions: list[Submission],
    graded: Callable[[Submission, GradeResult | Ungraded], None],
    status: Status,
) -> list[Submission]:
    """Grade submissions in one session until one leaves it unfit; those left."""
    left = list(submissions)
    current: list[Submission] = []

    def grade_all(session: pytest.Session) -> None:
        while left:
            submission = left.pop(0)
            current[:] = [submission]
            with status(submission) as ticker:
                plugins = [ticker] if ticker is not None else []
                if ticker is not None:  # the tests were collected before it was made
                    ticker.total = len(session.items)
                done = grade_in_session(session, options, submission, plugin.events, plugins)
            current.clear()
            graded(submission, done.outcome)
            if not done.reusable:
                return

    plugin = GradersSession(grade_all, empty_ok=bool(options.components))
    console = io.StringIO()
    code = run_graders(options.config, folders, _args(options, folders, left), plugin, console)
    if plugin.interrupted:
        raise Interrupted(current[0] if current else left[0])
    if not plugin.started:
        for submission in left:
            reason = not_started(plugin, code, folders, submission.name, _log(submission))
            outcome = cannot_grade(options.config, submission, reason)
            if outcome.reason == reason:  # the graders' problem: their console says more
                _write_log(submission, console.getvalue())
            graded(submission, outcome)
        return []
    return left


def _args(options: Options, folders: Sequence[Path], left: list[Submission]) -> list[str]:
    """pytest's command line; the session names the first submission (its console is that
    submission's grader.log when the graders cannot run)."""
    first = grader_package(options.config, left[0].folder, left[0].name)
    return pytest_args(
        options.config,
        folders,
        submission=first if isinstance(first, Path) else options.config.root,
        seed=options.seed,
        test_timeout=options.test_timeout,
        components=options.components,
    )


def _log(submission: Submission) -> Path:
    return submission.out_dir / LOG_FILE


def _write_log(submission: Submission, text: str) -> None:
    submission.out_dir.mkdir(parents=True, exist_ok=True)
    _log(submission).write_text(text, encoding="utf-8")


def _no_status(submission: Submission) -> AbstractContextManager[None]:
    return nullcontext()
