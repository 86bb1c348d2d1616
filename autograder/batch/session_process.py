"""One pytest session for a whole batch: the graders are collected once, forked children grade.

``run_batch`` is the batch's session process (grade-class, check): it runs one pytest session
over the pristine graders (grading/graders_session.py); where pytest would run the tests,
BatchSession (harness_pool.py) forks harness children that grade the learners, and each
learner's id goes out on ``progress`` once their folder is committed. When the graders cannot
run at all (a collection error, a bad marker, no tests), every learner gets a row saying so.

Invariant: the session process and its children hold the graders and references, never learner
code, which runs only in each learner's sandboxed worker (SECURITY.md). pytest's console up to
collection is DIR/.session.log; each learner's is their grader.log.

Design (why one session, why children are reused): docs/internals/runtime.md#a-batch-session.
"""

from __future__ import annotations

import signal
import sys
from multiprocessing.connection import Connection
from pathlib import Path

from autograder.atomic_files import cannot_write
from autograder.batch.harness_pool import BatchSession, _expected
from autograder.batch.processes import exit_with_parent, process_alive, remove_folder
from autograder.gradebook.roster import Learner
from autograder.gradebook.settings import JobSettings
from autograder.grading.bytecode import cache_bytecode

SESSION_LOG = ".session.log"  # in DIR: pytest's console up to collection (why graders failed)
SESSION_LOG_HEADER = (
    "This is the log of the batch's grading session (autograder grade-class or check): pytest "
    "configuring and collecting the graders once for the whole batch. No learner's tests run "
    "here (pytest may say 'no tests ran', and 'submission' names the course folder); each "
    "learner's tests and results are in {out}/<learner>/grader.log.\n\n"
)
SESSION_FAILED = (
    "The grading session failed before it graded anyone ({kind}: {detail}); fix that and run "
    "the command again."
)


def run_batch(
    settings: JobSettings,
    learners: list[Learner],
    jobs: int,
    progress: Connection,
    scratch: Path | None = None,
    command_temp: Path | None = None,
) -> None:
    """The batch's session process: collect the graders once, grade every learner in a fork,
    send each learner's id on `progress` once their folder is committed. ``scratch``: the
    batch's temporary folder, made by the command so that it can remove it if this process is
    killed. ``command_temp``: the command's own temporary folder (multiprocessing's, holding
    the socket of the server this process was forked from), removed if the command is killed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the batch command stops this process
    batch = BatchSession(settings, learners, jobs, progress, scratch)

    def command_gone() -> None:
        try:
            batch.shut_down()
        finally:
            if command_temp is not None:
                remove_folder(command_temp)

    exit_with_parent(settings.parent_pid, command_gone)
    try:
        _session(batch, settings)
    finally:
        if not process_alive(settings.parent_pid):  # its progress pipe broke first
            command_gone()


def _session(batch: BatchSession, settings: JobSettings) -> None:
    try:
        try:
            _run(batch, settings)
        except Exception as error:
            if batch.started:
                raise
            # Before any harness child: every row says why (not a traceback and "stopped" rows).
            batch.not_graded(SESSION_FAILED.format(kind=type(error).__name__, detail=error))
    except OSError as error:
        # A full disk (the log, a row): the command line's one sentence, not a traceback; the
        # command records the learners left (or says the same sentence if it cannot either).
        sentence = cannot_write(error)
        if sentence is None:
            raise
        print(sentence, file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    finally:
        batch.remove_scratch()
        batch.remove_expected()


def _run(batch: BatchSession, settings: JobSettings) -> None:
    from autograder.config import load_course
    from autograder.grading.graders_session import (
        GradersSession,
        not_started,
        pytest_args,
        run_graders,
    )
    from autograder.grading.one_submission import Options
    from autograder.grading.package_dir import grader_folders
    from autograder.results import Ungraded

    cache_bytecode(settings.out)
    _expected().use_folder(batch.expected)  # emptied: values never outlive this batch's graders
    config = load_course(settings.course)
    folders = grader_folders(config, visible_only=False)
    if isinstance(folders, Ungraded):
        return batch.not_graded(folders.reason)
    args = pytest_args(
        config,
        folders,
        submission=config.root,  # each learner's run names its own submission
        seed=settings.seed,
        test_timeout=settings.test_timeout,
        # Learner code sees neither DIR (other learners' reports, the compiled hidden graders in
        # DIR/.pycache) nor the other learners' exported commits and private copies.
        hide=[settings.out, batch.scratch],
    )
    batch.options = Options(
        config,
        seed=settings.seed,
        test_timeout=settings.test_timeout,
        hidden_included=len(folders) > 1,
        manifest=settings.manifest,
    )
    batch.graders = GradersSession(batch.grade_all)
    log = settings.out / SESSION_LOG
    with log.open("w", encoding="utf-8") as console:
        console.write(SESSION_LOG_HEADER.format(out=settings.out))
        code = run_graders(config, folders, args, batch.graders, console)
    if not batch.started:
        batch.not_graded(not_started(batch.graders, code, folders, "this class", log))
