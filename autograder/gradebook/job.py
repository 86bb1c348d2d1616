"""Grading one learner of a batch, in a child process, into DIR/<learner> atomically.

`grade_learner` is the child's whole life: select the commit, export it to a temporary folder,
compare the learner's copy of the visible tests with the pristine ones (the tamper flag), grade
with the pristine visible and hidden tests (the `grade` it is given: session.py runs the tests
its parent collected), then write the learner's folder through store.commit_learner. Anything
that goes wrong becomes the row's error sentence.

The child ignores Ctrl-C (the batch command stops it) and exits on its own if the command
disappears (kill -9), so an interrupted run never records an interruption as a learner's grade.
"""

from __future__ import annotations

import filecmp
import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder.gradebook import snapshot, store
from autograder.gradebook.roster import Learner
from autograder.gradebook.url_secrets import shown
from autograder.release.manifest import read_manifest
from autograder.reports.files import atomic_write_text

GRADER_CRASHED = (
    "The grader itself failed on this repository ({kind}: {detail}); tell the instructor."
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
MISSING_LIST_LIMIT = 5  # more protected files missing than this: one sentence, not a list
MANY_MISSING = (
    "{missing} of {total} protected files missing, each listed in {learner}/results.json (not "
    "a clone of the release?)"
)
PARENT_POLL = 1.0  # seconds between checks that the batch command is still alive
REMOVE_PATIENCE = 5.0  # seconds to keep removing a temporary folder that is still written in
PYCACHE_DIR = ".pycache"  # in DIR: compiled (assertion-rewritten) grader modules
_KEPT: list[Any] = []  # context managers entered for the life of the process


@dataclass(frozen=True)
class JobSettings:
    """What every job of one batch run shares (picklable: paths and plain values)."""

    course: Path
    out: Path
    deadline: str | None
    test_timeout: float | None
    seed: int
    run_id: str
    parent_pid: int
    manifest: Path | None = None  # a release manifest: its protected-file changes are tamper
    shard: str = ""  # "i/n" of --shard, "" for the whole roster
    # sha256 of the course's files and of the manifest's bytes (gradebook/contents.py), taken
    # once by the command; "" when not taken (autograder check, whose records are not reused)
    course_digest: str = ""
    manifest_digest: str = ""
    # contents.course_parts: each part's digest, so that a refusal can say which one changed
    course_parts: tuple[tuple[str, str], ...] = ()


def run_settings(settings: JobSettings) -> str:
    """The settings every learner of a run shares, as a short digest: shards merged into one
    gradebook must have been graded with the same ones (merge.py)."""
    return _digest(_shared(settings))


def instant_settings(settings: JobSettings) -> str:
    """run_settings with the deadline as the instant it names, in UTC: the shards of one run
    whose deadline was written in other words (+05:30 and Z) share it, so merge.py merges
    them (their run_settings differ, and stay as they were for the outputs already written)."""
    parts = _shared(settings)
    if settings.deadline:
        parts[0] = snapshot.parse_deadline(settings.deadline).astimezone(UTC).isoformat()
    return _digest(parts)


def shared_options(settings: JobSettings) -> dict[str, str]:
    """What _shared's parts come from, by option, as a person reads them (DIR/run.json keeps
    them, so that a rerun with other settings can be told what differs: changed_settings.py).
    The manifest is named with the start of its digest, each part of the course by its own
    (contents.COURSE_PARTS)."""
    return {
        "--deadline": settings.deadline or "",
        "--timeout": str(settings.test_timeout),
        "--seed": str(settings.seed),
        "--manifest": _with_digest(settings.manifest, settings.manifest_digest),
        "--course": str(settings.course),
        **{name: digest[:12] for name, digest in settings.course_parts},
    }


def _with_digest(path: Path | None, digest: str) -> str:
    if path is None:
        return ""
    return f"{path} (contents {digest[:12]})" if digest else str(path)


def _shared(settings: JobSettings) -> list[str]:
    """What grading every learner of a run depends on: the options, and the contents of the
    course and the manifest (not their paths: a copy elsewhere is the same setting). A
    record whose key no longer matches is graded again, or refused (changed_settings.py)."""
    return [
        settings.deadline or "",
        str(settings.test_timeout),
        str(settings.seed),
        settings.manifest_digest if settings.manifest else "",
        settings.course_digest,
    ]


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def settings_key(settings: JobSettings, learner: Learner) -> str:
    """What a finished record must match to be reused by a resumed run."""
    parts = [str(learner.repo), *_shared(settings)]
    if learner.url:  # its copy's path stays the same when the roster gives another URL
        parts.append(learner.url)
    return _digest(parts)


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
    from autograder.reports.terminal import Ungraded

    if learner.repo is None:
        record.error = learner.error
        return
    try:
        deadline = snapshot.parse_deadline(settings.deadline)
        selection = snapshot.select(learner.repo, deadline)
        left_out: list[tuple[str, str]] = []
        folder = snapshot.export(learner.repo, selection, scratch / learner.id, left_out)
    except (snapshot.SnapshotError, ValueError) as error:
        record.error = str(error)
        record.nothing_submitted = isinstance(error, snapshot.NothingSubmitted)
        if learner.url:  # the row names the URL the roster gave, not this machine's copy
            record.error = record.error.replace(str(learner.repo), shown(learner.url))
        return
    record.commit, record.commit_time, record.late = (
        selection.commit,
        selection.commit_time,
        selection.later,
    )
    record.tamper = tampered_files(config.visible_tests, config.root, folder)
    graded = None
    if selection.commit:
        from autograder.results import LEFT_OUT_KEPT, GradedCommit

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
        )
    outcome = grade(config, folder, staged, learner.id, graded)
    if isinstance(outcome, Ungraded):
        record.error = _named(outcome.reason, folder, learner, selection.commit, left_out)
        return
    if settings.manifest is not None:
        total = len(read_manifest(settings.manifest))
        record.tamper += protected_tamper(
            outcome.protected_changes, record.tamper, total=total, learner=learner.id
        )
    record.components = {c.name: c.score for c in outcome.components}
    record.total, record.max_score = outcome.score, outcome.max_score


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


def protected_tamper(
    changes: list[dict], tamper: list[str], *, total: int, learner: str
) -> list[str]:
    """The tamper entries that the release manifest's changes add to ``tamper`` (the visible
    tests' own): "changed PATH" and "missing PATH" for each protected file not already there;
    more than MISSING_LIST_LIMIT missing files become one MANY_MISSING sentence (a repository
    that is not a clone of the release misses them all; results.json lists them)."""
    known = {entry.split(" ", 1)[1] for entry in tamper}
    fresh = [c for c in changes if c["path"] not in known]
    missing = sum(c["got"] == "missing" for c in fresh)
    listed = missing <= MISSING_LIST_LIMIT
    entries = [
        f"{'missing' if c['got'] == 'missing' else 'changed'} {c['path']}"
        for c in fresh
        if listed or c["got"] != "missing"
    ]
    if not listed:
        entries.append(MANY_MISSING.format(missing=missing, total=total, learner=learner))
    return entries


def tampered_files(pristine: Path, course_root: Path, repo: Path) -> list[str]:
    """Files of the learner's copy of the visible tests that differ from the pristine ones, and
    Python files there that the course does not have (a conftest.py, say). Missing files are
    not tampering: the batch run always uses the pristine tests."""
    try:
        relative = pristine.resolve().relative_to(course_root.resolve())
    except ValueError:
        return []
    theirs = repo / relative
    if not theirs.is_dir():
        return []
    changed = []
    for path in sorted(theirs.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        inner = path.relative_to(theirs)
        ours = pristine / inner
        if ours.is_file():
            if not filecmp.cmp(ours, path, shallow=False):
                changed.append(f"changed {relative / inner}")
        elif path.suffix == ".py" or path.name in {"pytest.ini", "conftest.py"}:
            changed.append(f"added {relative / inner}")
    return changed


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


def cache_bytecode(out: Path) -> None:
    """Keep pytest's rewritten grader modules between learners. When bytecode writing is off
    (PYTHONDONTWRITEBYTECODE, often set to keep a repository clean), every learner would rewrite
    and compile every grader module again: about half of the harness's CPU time per learner.
    The cache then goes to DIR/.pycache, never into the course tree or a learner's folder."""
    if sys.dont_write_bytecode:
        from autograder.commands.bytecode import damaged_bytecode_recompiled

        sys.pycache_prefix = str(Path(out) / PYCACHE_DIR)
        sys.dont_write_bytecode = False
        # For the rest of this process: a damaged file there is compiled again, not fatal.
        _KEPT.append(damaged_bytecode_recompiled(Path(sys.pycache_prefix)))
        _KEPT[-1].__enter__()


def exit_with_parent(
    parent_pid: int,
    before_exit: Callable[[], None] | None = None,
    *,
    ppid: int | None = None,
) -> None:
    """A daemon thread that ends this process once the batch command is gone (after
    ``before_exit``, if given), or, with ``ppid``, once this process's parent is no longer
    that one (the session process that forked a harness child was killed)."""

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL)
            if not process_alive(parent_pid) or (ppid is not None and os.getppid() != ppid):
                try:
                    if before_exit is not None:
                        before_exit()
                finally:
                    os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def process_alive(pid: int) -> bool:
    """Whether process `pid` still runs. A killed process whose parent has not collected it
    yet (a zombie: `subprocess.run` reaps only once every pipe is closed) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust the signal check
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def remove_folder(folder: Path, patience: float = REMOVE_PATIENCE) -> None:
    """Remove ``folder`` and all in it, trying again for up to ``patience`` seconds while it
    is still there: a process that is ending (a killed learner's worker, still writing in its
    private copy) can add a file while the tree is removed, and the last rmdir then fails."""
    deadline = time.monotonic() + patience
    while True:
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.lexists(folder) or time.monotonic() >= deadline:
            return
        time.sleep(0.05)


def _error_summary(learner: Learner, error: str) -> str:
    """The learner's summary.md when nothing could be graded: the row's error, as Markdown, with
    the repository named by the learner's id instead of its path on the instructor's machine
    (the gradebook keeps the path)."""
    from autograder.reports.sanitize import markdown_inline

    if learner.repo is not None:
        for path in sorted({str(learner.repo), str(Path(learner.repo).resolve())}, key=len)[::-1]:
            error = error.replace(path, learner.id)
    return ERROR_SUMMARY.format(learner=learner.id, error=markdown_inline(error, table=False))
