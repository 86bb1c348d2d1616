"""The command's side of a batch: start its session process, show progress, record the rest.

`grade_pending` is the engine of `grade-class` and `check`: it starts the batch's session
process (batch/session_process.py) from the warm fork server, shows a progress bar (plain
lines without a terminal) while the session reports each learner done, and gives a row to each
learner the session could not report (it died), before it returns.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import signal
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from autograder.batch import fork_server
from autograder.batch.harness_pool import EXPECTED_DIR, SCRATCH_PREFIX
from autograder.batch.learner_job import failed_record
from autograder.batch.processes import remove_folder
from autograder.batch.session_process import run_batch
from autograder.gradebook import roster, store
from autograder.gradebook.resume import error_row
from autograder.gradebook.settings import JobSettings
from autograder.progress.in_progress import InProgress, InProgressColumn
from autograder.progress.log_lines import LogLines
from autograder.progress.time_left import TimeLeft, TimeLeftColumn


def grade_pending(
    settings: JobSettings,
    pending: list[roster.Learner],
    total: int,
    jobs: int,
    err: Console,
    *,
    label: str = "grading",
    noun: str = "learners",
    failed: int = 0,
    meanwhile: Callable[[], object] | None = None,
) -> None:
    """Grade pending learners into settings.out, `jobs` at a time, with a progress bar on err
    (`label` names the work, `noun` what it counts; `failed`: the errors of learners kept from
    before, which its count starts from, so that it ends equal to the error rows, those with
    nothing submitted aside). One session process collects the graders once and forks harness
    children that grade one learner after another (batch/session_process.py); it is itself a
    fork of a warm server (numpy, torch, pytest and the framework imported). Also `autograder
    check`'s engine: every learner's folder holds record.json and, when graded, results.json.
    ``meanwhile``: run in a background thread once the session process is started (not before:
    until then this thread's work is what the batch waits for)."""
    if not pending:
        return
    context = fork_server.start()  # already running when the command line started it
    reader, writer = context.Pipe(duplex=False)
    # The session process removes this folder when it ends or when this command is killed; this
    # command removes it when the session process is killed.
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
    # multiprocessing's folder for the fork server's socket: the session removes it if this
    # command is killed (kill -9 runs no exit handler here).
    command_temp = Path(multiprocessing.util.get_temp_dir())
    process = context.Process(
        target=run_batch,
        args=(settings, pending, jobs, writer, scratch, command_temp),
        name="grade-session",
    )
    shown = _Shown(settings, pending, total, jobs, err, label, noun, failed)
    with shown.progress:
        try:
            _start_uninterrupted(process)
            if meanwhile is not None:
                threading.Thread(target=meanwhile, daemon=True, name="meanwhile").start()
            writer.close()
            _follow(process, reader, settings, pending, shown)
        except BaseException:
            if process.pid is not None:  # not when stopped while the fork server was starting
                process.terminate()
                process.join(5)
            raise
        finally:
            shown.in_progress.clear()  # the bar stays on screen: no learner named as running
            remove_folder(scratch)
            # The session removes the shared expected values when it ends on its own; not when
            # it is stopped (Ctrl-C here) or killed: they must not outlive the batch in DIR.
            remove_folder(settings.out / EXPECTED_DIR)


class _Shown:
    """The progress of a batch at the terminal: a bar (plain lines without a terminal, H49)
    with the learners done, the error rows and the learners being graded now."""

    def __init__(
        self,
        settings: JobSettings,
        pending: list[roster.Learner],
        total: int,
        jobs: int,
        err: Console,
        label: str,
        noun: str,
        failed: int,
    ) -> None:
        self.out = settings.out
        self.in_progress = InProgress(settings.out, (learner.id for learner in pending))
        self.time_left = TimeLeft(total, jobs)
        columns = (
            TextColumn(f"[bold]{label}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("errors {task.fields[failed]}"),
            TimeElapsedColumn(),
            TimeLeftColumn(self.seconds_left),
            InProgressColumn(self.in_progress),
        )
        self.done, self.failed = total - len(pending), failed
        self.lines = None  # no terminal, no bar drawn: plain lines instead
        if not err.is_terminal and not err.quiet:
            self.lines = LogLines(err, label, total, started=self.done, noun=noun)
        # Without a terminal the plain lines are the progress: rich would print its bar once,
        # at the end, in box characters (H49)
        self.progress = Progress(
            *columns, console=err, transient=False, disable=self.lines is not None
        )
        self.task = self.progress.add_task(
            "grading", total=total, completed=self.done, failed=failed
        )

    def seconds_left(self) -> float | None:
        """The time left (time_left.py), None when unknown."""
        return self.time_left.seconds(self.done, self.in_progress.since)

    def advance(self, learner_id: str) -> None:
        """One more learner done (an error row counted as one)."""
        self.time_left.finished(self.in_progress.started_at(learner_id))
        self.in_progress.refresh()  # their folder is in place: no longer running
        self.failed += error_row(store.read_record(self.out, learner_id))
        self.done += 1
        self.progress.update(self.task, advance=1, failed=self.failed)
        self.tick()

    def tick(self) -> None:
        """The plain lines' news (at least a line a minute, also while stuck)."""
        if self.lines is not None:
            running = self.in_progress.describe()
            self.lines.update(self.done, self.failed, running, self.seconds_left())


def _follow(
    process: multiprocessing.process.BaseProcess,
    reader: Any,
    settings: JobSettings,
    pending: list[roster.Learner],
    shown: _Shown,
) -> None:
    """Until the session process ends: each learner it reports done advances the progress; a
    learner it never reported (it died) gets a row saying so."""
    left = {learner.id: learner for learner in pending}
    while left:
        shown.in_progress.refresh()
        if not reader.poll(1.0):
            shown.tick()
            continue
        try:
            learner_id = reader.recv()
        except EOFError:  # the session process is gone
            break
        if left.pop(learner_id, None) is not None:
            shown.advance(learner_id)
            shown.in_progress.refresh()  # their folder is in place: no longer in progress
    process.join()
    shown.in_progress.refresh()  # whom the session's children had begun to grade
    for learner in list(left.values()):  # the session died before reporting them
        reached = learner.id in shown.in_progress.since
        failed_record(settings, learner, process.exitcode, reached=reached)
        shown.advance(learner.id)


def _start_uninterrupted(process: multiprocessing.process.BaseProcess) -> None:
    """Start the session process; a Ctrl-C meanwhile is raised once its pid is known, so that
    grade_pending can stop it (raised inside start(), the fork server would still fork it,
    and it would grade on, orphaned, with nobody to stop it)."""
    interrupted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupted.append(signum))
    try:
        process.start()
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupted:
        raise KeyboardInterrupt
