"""Grading one learner of a batch, in a child process, into DIR/<learner> atomically.

`grade_learner` is what a harness child does for each learner: select the commit, export it to
a temporary folder, compare the learner's copy of the visible tests with the pristine ones (the
tamper flag), grade with the pristine visible and hidden tests (the `grade` it is given:
session_process.py grades through grading/one_submission.grade_in_session, in the session its
parent collected), then write the learner's folder through store.commit_learner. Anything that goes
wrong becomes the row's error sentence.

The child ignores Ctrl-C (the batch command stops it) and exits on its own if the command
disappears (kill -9), so an interrupted run never records an interruption as a learner's grade.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder.atomic_files import atomic_write_text
from autograder.batch.processes import remove_folder
from autograder.copies.sources import keep_graded
from autograder.gradebook import late, snapshot, store
from autograder.gradebook.roster import Learner
from autograder.gradebook.settings import JobSettings, run_settings, settings_key
from autograder.gradebook.tamper import protected_tamper, tampered_files
from autograder.gradebook.url_secrets import shown
from autograder.release.manifest import read_manifest

GRADER_CRASHED = (
    "The grader itself failed on this repository ({kind}: {detail}); tell the instructor."
)
GRADER_ERRORS_REVIEW = (
    "{count} test(s) failed inside the graders, not in the learner's code (first: {first}); "
    "they scored zero: read grader.log, fix the graders if they are at fault, and run the "
    "command again (this learner is graded again, not reused)."
)
PROCESS_DIED = (
    "The grading process for {learner} stopped (exit status {code}) before it wrote a grade; "
    "rerun the command to try again."
)
NOT_REACHED = (
    "The batch's grading process stopped (exit status {code}) before it reached {learner}; "
    "rerun the command to grade them."
)
ERROR_SUMMARY = "# Grade for {learner}\n\nThis repository was not graded. {error}\n"


#: grade(config, folder, staged, name, graded): the learner's exported folder graded into
#: staged; graded (results.GradedCommit or None) is the commit the reports name.
Grade = Callable[[Any, Path, Path, str, Any], Any]


def grade_learner(
    settings: JobSettings,
    learner: Learner,
    grade: Grade,
    wanted: Callable[[], bool] | None = None,
) -> None:
    """In a harness child: grade one learner with `grade` and commit their folder,
    unless ``wanted`` then says the batch is gone (a grade made while the command was being
    killed may count failures of its dying worker: the rerun grades that learner again)."""
    start = time.monotonic()
    graded_at = datetime.now(UTC).isoformat(timespec="seconds")
    record = store.LearnerRecord(
        learner=learner.id, graded_at=graded_at, deadline=settings.deadline or ""
    )
    record.settings, record.shard = run_settings(settings), settings.shard
    record.note = learner.note
    # A grade from a copy that could not be updated is tried again by the next run.
    record.key = "" if learner.note else settings_key(settings, learner)
    record.run_id = settings.run_id
    staged = store.staging_dir(settings.out, learner.id)
    scratch = Path(tempfile.mkdtemp(prefix=f"t101-batch-{learner.id}-"))
    try:
        from autograder.config import load_course

        config = load_course(settings.course)
        _grade(config, settings, learner, staged, scratch, record, grade)
    except Exception as error:  # the row must say what happened, whatever it was
        record.error = GRADER_CRASHED.format(kind=type(error).__name__, detail=error)
    finally:
        remove_folder(scratch)
    record.duration_s = time.monotonic() - start
    if record.error:
        atomic_write_text(staged / "summary.md", _error_summary(learner, record.error))
    if wanted is None or wanted():
        store.commit_learner(settings.out, staged, record)


def _grade(
    config,
    settings: JobSettings,
    learner: Learner,
    staged: Path,
    scratch: Path,
    record: store.LearnerRecord,
    grade: Grade,
) -> None:
    from autograder.results import Ungraded

    record.extension_days = learner.extension_days
    if learner.repo is None:
        record.error = learner.error
        return
    taken = _take_commit(config, settings, learner, scratch, record)
    if taken is None:
        return
    selection, folder, left_out, graded = taken
    keep_graded(config, folder, staged, learner.id)  # for `autograder similarity`
    outcome = grade(config, folder, staged, learner.id, graded)
    if isinstance(outcome, Ungraded):
        record.error = _named(outcome.reason, folder, learner, selection.commit, left_out)
        return
    if settings.manifest is not None:
        total = len(read_manifest(settings.manifest))
        record.tamper += protected_tamper(
            outcome.protected_changes, record.tamper, total=total, learner=learner.id
        )
    record.review = [flag.sentence for flag in outcome.review]
    if outcome.grader_errors:  # points lost to the graders, not to the learner: say so
        first = outcome.grader_errors[0]
        record.review.append(
            GRADER_ERRORS_REVIEW.format(count=len(outcome.grader_errors), first=first)
        )
        record.key = ""  # never reused: a rerun grades this learner again
    record.components = {c.name: c.score for c in outcome.components}
    record.total, record.max_score = outcome.score, outcome.max_score
    late.record_fields(record, outcome.graded.late if outcome.graded else None)


def _take_commit(
    config, settings: JobSettings, learner: Learner, scratch: Path, record: store.LearnerRecord
) -> tuple[snapshot.Selection, Path, list[tuple[str, str]], Any] | None:
    """The learner's commit to grade (the deadline, their extension and the late policy
    decide), exported into scratch, and its GradedCommit (None without a commit); the record
    gains the commit's columns, or the error (then None is returned)."""
    from autograder.results import LEFT_OUT_KEPT, GradedCommit

    try:
        span = late.window(settings.deadline, learner.extension_days, config.late)
        repo = learner.repo  # a copy this batch fetched is its own; any other is copied first
        if not learner.url and learner.repo.is_dir() and any(learner.repo.iterdir()):
            repo = snapshot.private_clone(learner.repo, scratch / f"{learner.id}.git")
        selection = late.select(repo, span)
        left_out: list[tuple[str, str]] = []
        folder = snapshot.export(repo, selection, scratch / learner.id, left_out)
    except (snapshot.SnapshotError, ValueError) as error:
        record.error = str(error).replace(str(scratch / f"{learner.id}.git"), str(learner.repo))
        record.nothing_submitted = isinstance(error, snapshot.NothingSubmitted)
        if learner.url:  # the row names the URL the roster gave, not this machine's copy
            record.error = record.error.replace(str(learner.repo), shown(learner.url))
        return None
    record.commit, record.commit_time = selection.commit, selection.commit_time
    record.late = selection.later
    record.tamper = tampered_files(config.visible_tests, config.root, folder)
    if not selection.commit:
        return selection, folder, left_out, None
    graded = GradedCommit(
        selection.commit,
        selection.commit_time,
        settings.deadline or "",
        selection.later,
        stale=bool(learner.note),
        left_out=tuple(left_out[:LEFT_OUT_KEPT]),
        left_out_more=max(0, len(left_out) - LEFT_OUT_KEPT),
        later_count=selection.later_count,
        last_time=selection.last_time,
        late=late.judge(span, selection.commit_time),
    )
    return selection, folder, left_out, graded


EXPORTED = "{repo} at commit {commit}"
LEFT_OUT_OF_COMMIT = " Left out of the commit, so not graded: {entries}."


def _named(
    reason: str, folder: Path, learner: Learner, commit: str, left_out: list[tuple[str, str]]
) -> str:
    """``reason`` (a sentence about the exported folder) naming the learner's repository and
    commit instead of the throwaway folder the commit was exported to, which changed from run
    to run (H48: the gradebook differed after every --force); with what the export left out
    (a symbolic link in place of the package folder, say)."""
    if not commit:  # a plain folder, graded where it is
        return reason
    repo = shown(learner.url) if learner.url else str(learner.repo)
    said = reason.replace(str(folder), EXPORTED.format(repo=repo, commit=commit[:12]))
    if left_out:
        from autograder.results import left_out_entries

        said += LEFT_OUT_OF_COMMIT.format(entries=left_out_entries(left_out))
    return said


def failed_record(
    settings: JobSettings, learner: Learner, code: int | None, *, reached: bool = True
) -> None:
    """Called by the parent when a child died without committing: record the death (a rerun
    grades that learner again, as the sentence promises); nothing when the learner's folder
    holds this run's grade after all (committed just before the death). ``reached``: False for
    a learner whose grading never began (the session process died before)."""
    record = store.read_record(settings.out, learner.id)
    if record is not None and record.run_id == settings.run_id:
        return
    sentence = PROCESS_DIED if reached else NOT_REACHED
    error_record(settings, learner, sentence.format(learner=learner.id, code=code), reusable=False)


def error_record(
    settings: JobSettings, learner: Learner, error: str, *, reusable: bool = True
) -> None:
    """A row for a learner who could not be graded at all, saying why. ``reusable``: False when
    the cause is the run, not the repository (a killed process, graders that could not run),
    so that a rerun grades the learner again instead of keeping the row."""
    record = store.LearnerRecord(
        learner=learner.id,
        error=error,
        graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        deadline=settings.deadline or "",
        settings=run_settings(settings),
        shard=settings.shard,
    )
    record.key = settings_key(settings, learner) if reusable else ""
    record.run_id = settings.run_id
    staged = store.staging_dir(settings.out, learner.id)
    atomic_write_text(staged / "summary.md", _error_summary(learner, record.error))
    store.commit_learner(settings.out, staged, record)


def _error_summary(learner: Learner, error: str) -> str:
    """The learner's summary.md when nothing could be graded: the row's error, as Markdown, with
    the repository named by the learner's id instead of its path on the instructor's machine
    (the gradebook keeps the path)."""
    from autograder.learner_text import markdown_inline

    if learner.repo is not None:
        for path in sorted({str(learner.repo), str(Path(learner.repo).resolve())}, key=len)[::-1]:
            error = error.replace(path, learner.id)
    return ERROR_SUMMARY.format(learner=learner.id, error=markdown_inline(error, table=False))
