"""`autograder grade-class ROSTER --out DIR`: grade a whole class into a gradebook.

1. read the roster (a folder of repositories or a CSV), keep this shard (--shard i/n);
2. lock DIR for this command (gradebook/lock.py: a second command writing DIR meanwhile is
   refused with one sentence), clear DIR/.partial; skip learners whose
   DIR/<learner>/record.json was graded with the same settings (unless --force): this is what
   makes a rerun resume;
   In CI, a machine that only allows the process-group isolation level is refused first
   unless --allow-unconfined (unconfined_grading.py); elsewhere stderr says it once.
3. clone or update the copies of those given by clone URL (gradebook/fetch.py), then grade
   them in parallel, --jobs at a time, with a progress bar that names the learners
   being graded and for how long (progress/in_progress.py): one session process
   collects the graders once and forks harness children that grade one learner after another
   (batch/session_process.py); each learner's folder is committed atomically;
4. rebuild DIR/gradebook.csv from the records (learner order), write the class report, print
   a per-component table. The components are course.toml's, then the course's notebook
   assignments (`notebook`): a learner whose repository has no notebook has an empty cell there.

Exit status: 0 every learner was graded; 1 some rows carry an error; 2 the run could not start
(bad roster, course or option), with one sentence on stderr; 130 interrupted (rerun to resume).
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from autograder.batch.launch import grade_pending
from autograder.batch.processes import jobs_or_cores
from autograder.commands import unconfined_grading
from autograder.config import (
    CourseConfig,
    CourseConfigError,
    OptionError,
    check_timeout,
    load_course_option,
)
from autograder.gradebook import (
    changed_settings,
    class_output,
    contents,
    fetch,
    lock,
    newer_commits,
    remote_heads,
    report_figures,
    report_model,
    resume,
    roster,
    snapshot,
    store,
)
from autograder.gradebook.settings import (
    JobSettings,
    instant_settings,
    run_settings,
    shared_options,
)
from autograder.grading.package_dir import course_files_refusal
from autograder.progress.fetching import fetch_pending
from autograder.release.manifest import ManifestError, read_manifest

INTERRUPTED = (
    "Interrupted: {done} of {total} learners are saved in {out}; run the same command again to "
    "grade the rest."
)
INTERRUPTED_FORCED = (
    "Interrupted: {done} of {total} learners are saved in {out}; run the same command again "
    "without --force to grade the rest (with --force, everyone is graded again)."
)
INTERRUPTED_NOTE = (
    "This run was interrupted: {done} of its {total} learners are done (a grade or an error "
    "row, by it or kept from an earlier run of the same settings); not yet: {left}. The "
    "gradebook and this "
    "report show every learner's folder as it is now: the row of a learner not graded yet is "
    "from an earlier run, or says that they are not graded yet. Run the same command "
    "again{without} to grade the rest."
)
NOT_GRADED_YET = (
    "Not graded yet: this run was interrupted before it graded {learner}; run the same command "
    "again to grade them."
)
INTERRUPTED_REPORT = (
    "Interrupted while writing the gradebook and the class report: all {total} learners are "
    "saved in {out}; run the same command again to write them."
)
OUT_IN_ROSTER = (
    "--out {out} is inside the roster folder {roster}, where every folder is a learner's "
    "repository; choose an output folder outside it."
)
NOT_IN_ROSTER = "--regrade names {names}, who the roster {roster} does not list."
UNREADABLE = "The course's files or the manifest could not be read ({detail})."
REGRADE_AND_FORCE = (
    "--regrade grades the named learners again and keeps the others, --force grades everyone "
    "again: give one of them."
)
_EXIT_BAD, _EXIT_INTERRUPTED = 2, 130


@dataclass(frozen=True)
class _Given:
    """What the command line gives, read and checked before DIR is touched."""

    config: CourseConfig
    selection: tuple[int, int] | None  # --shard, as (i, n)
    everyone: list[roster.Learner]  # the whole roster
    learners: list[roster.Learner]  # this shard's
    manifest: Path | None
    course_parts: dict[str, str]
    manifest_digest: str
    jobs: int


def main(
    *,
    roster_path: Path,
    out: Path,
    course: Path | None,
    jobs: int | None,
    deadline: str | None,
    shard: str | None,
    force: bool,
    test_timeout: float | None,
    seed: int,
    quiet: bool,
    manifest: Path | None = None,
    regrade: Sequence[str] = (),
    regrade_moved: bool = False,
    allow_unconfined: bool = False,
) -> int:
    """Grade the roster into out; return the exit status of the module docstring.
    ``regrade``: learner ids graded again even when they have a result (--regrade);
    ``regrade_moved``: also those whose repository moved on since (gradebook/remote_heads.py);
    ``allow_unconfined``: grade at process-group in CI too (unconfined_grading.py)."""
    given = _read(
        roster_path, course, shard, deadline, force, regrade, manifest, jobs, test_timeout
    )
    if isinstance(given, str):
        return _error(given)
    refused = unconfined_grading.refuse_or_say(os.environ, allowed=allow_unconfined)
    if refused:
        return _error(refused)
    shown, out = Path(out), Path(out).resolve()
    if Path(roster_path).is_dir() and out.is_relative_to(Path(roster_path).resolve()):
        return _error(OUT_IN_ROSTER.format(out=out, roster=roster_path))
    out.mkdir(parents=True, exist_ok=True)
    try:
        held = lock.hold(out, "grade-class")
    except lock.LockError as busy:
        return _error(str(busy))
    with held:  # until the gradebook is written: a second command would race on DIR
        refusal = store.foreign(out, [learner.id for learner in given.learners])
        if refusal:
            return _error(refusal)
        store.clear_partial(out)
        # Made by the command itself: a folder it cannot write in (a read-only --out that
        # exists) ends here with the command line's one sentence, not in the session
        # process's traceback.
        (out / store.PARTIAL_DIR).mkdir()
        learners = fetch.locate(given.learners, out)  # a clone URL's copy: DIR/.repos/<id>.git
        records = {learner.id: store.read_record(out, learner.id) for learner in learners}
        if regrade_moved:  # asks each server its HEAD: fetches only the learners that moved
            regrade = [*regrade, *remote_heads.moved(learners, records, _stderr)]
        settings = _settings(
            given, out, resume.as_recorded(deadline, records.values()), test_timeout, seed
        )
        if not force:
            refused = changed_settings.refusal(
                records.values(), settings, forced=store.forced_since(out), run=store.read_run(out)
            )
            if refused:
                return _error(refused)
        return _grade(given, learners, records, settings, force, regrade, quiet, shown)


def _read(
    roster_path: Path,
    course: Path | None,
    shard: str | None,
    deadline: str | None,
    force: bool,
    regrade: Sequence[str],
    manifest: Path | None,
    jobs: int | None,
    test_timeout: float | None,
) -> _Given | str:
    """The course, the roster and this shard of it, the manifest and the options, checked; or
    the one sentence saying what is wrong with them."""
    try:
        config = load_course_option(course)
        missing = course_files_refusal(config, visible_only=False)  # before the gradebook
        if missing is not None:
            raise ValueError(missing)
        selection = roster.parse_shard(shard)
        everyone = roster.read_roster(roster_path)
        snapshot.parse_deadline(deadline)
        if regrade and force:
            raise ValueError(REGRADE_AND_FORCE)
        unknown = sorted(set(regrade) - {learner.id for learner in everyone})
        if unknown:
            raise ValueError(NOT_IN_ROSTER.format(names=", ".join(unknown), roster=roster_path))
        if manifest is not None:
            manifest = Path(manifest).resolve()
            read_manifest(manifest)
        course_parts = contents.course_parts(config)
        manifest_digest = contents.file_digest(manifest)
        jobs = jobs_or_cores(jobs)
        check_timeout(test_timeout)
    except (CourseConfigError, roster.RosterError, OptionError, ValueError, ManifestError) as error:
        return str(error)
    except OSError as error:  # a grader file or the manifest could not be read
        return UNREADABLE.format(detail=error)
    learners = roster.shard(everyone, selection)
    return _Given(
        config, selection, everyone, learners, manifest, course_parts, manifest_digest, jobs
    )


def _settings(
    given: _Given, out: Path, deadline: str | None, test_timeout: float | None, seed: int
) -> JobSettings:
    """What every learner of this run is graded with."""
    return JobSettings(
        course=given.config.path,
        out=out,
        deadline=deadline,
        # the course's own when not given: --timeout 10 and none are the same setting
        test_timeout=given.config.limits.test_timeout if test_timeout is None else test_timeout,
        seed=seed,
        run_id=uuid.uuid4().hex,
        parent_pid=os.getpid(),
        manifest=given.manifest,
        shard=f"{given.selection[0]}/{given.selection[1]}" if given.selection else "",
        course_digest=contents.course_digest(given.course_parts),
        manifest_digest=given.manifest_digest,
        course_parts=tuple(given.course_parts.items()),
    )


def _grade(
    given: _Given,
    learners: list[roster.Learner],
    records: dict[str, store.LearnerRecord | None],
    settings: JobSettings,
    force: bool,
    regrade: Sequence[str],
    quiet: bool,
    shown: Path,
) -> int:
    """Grade the learners the run does not keep, then write the gradebook and the report."""
    out, ids = settings.out, [learner.id for learner in learners]
    run = (out, settings.shard, run_settings(settings))
    written = {"same_as": instant_settings(settings), "options": shared_options(settings)}
    if given.selection:  # merge gives a missing shard's learners a row each
        written["everyone"] = sorted(learner.id for learner in given.everyone)
    roster_id = store.roster_digest([learner.id for learner in given.everyone])
    store.write_run(*run, roster=roster_id, complete=False, learners=ids, **written)
    if force:  # until a run grades everyone, a rerun without --force goes on from here
        store.mark_forced(out, datetime.now(UTC).isoformat(timespec="seconds"))
    forced = store.forced_since(out)
    pending = [
        learner
        for learner in learners
        if force
        or learner.id in regrade
        or not resume.kept(records[learner.id], settings, learner, forced)
    ]
    # soft_wrap: in a log (no terminal, 80 columns) a sentence stays on one line (H49)
    err = Console(stderr=True, highlight=False, quiet=quiet, soft_wrap=True)
    _say_kept(err, learners, pending, records, settings, force)
    try:
        pending = fetch_pending(pending, out, err)
        kept = set(ids) - {learner.id for learner in pending}
        failed = sum(resume.error_row(records[i]) for i in kept)
        # The class report's figure library loads while the learners are graded.
        grade_pending(
            settings, pending, len(learners), given.jobs, err, failed=failed,
            meanwhile=report_figures.figure_library,
        )  # fmt: skip
        store.clear_forced(out)  # everyone is graded since the --force run began
        store.write_run(*run, roster=roster_id, complete=True, learners=ids, **written)
    except KeyboardInterrupt:
        return _interrupted(out, learners, settings, forced, given.config)
    except (fetch.FetchError, FileExistsError) as error:  # FileExistsError: store.FOREIGN,
        return _error(str(error))  # something put at a learner's name in DIR meanwhile
    try:
        return class_output.finish(given.config, out, ids, quiet=quiet, shown=shown)
    except KeyboardInterrupt:  # not 'before anything was graded', the command line's sentence
        return _interrupted(out, learners, settings, forced)


def _say_kept(
    err: Console,
    learners: list[roster.Learner],
    pending: list[roster.Learner],
    records: dict[str, store.LearnerRecord | None],
    settings: JobSettings,
    force: bool,
) -> None:
    """What the run keeps from an earlier one, and why it grades some learners again."""
    out, quiet = settings.out, err.quiet
    if not pending:
        err.print(resume.ALL_SAVED.format(total=len(learners), out=out))
    elif len(pending) < len(learners):
        done = len(learners) - len(pending)
        err.print(resume.RESUMING.format(done=done, total=len(learners), out=out))
    if settings.deadline is None:  # said even with --quiet: those rows no longer show the repo
        pending_ids = {learner.id for learner in pending}
        kept_rows = [(lr, records[lr.id]) for lr in learners if lr.id not in pending_ids]
        newer = newer_commits.note(newer_commits.moved(kept_rows), out)
        if newer and quiet:
            print(newer, file=sys.stderr)
        elif newer:
            err.print(newer, markup=False)
    if not force:  # the roster gives another repository or extension: graded again
        same = run_settings(settings)
        for said in changed_settings.roster_changes(pending, records, same, settings, out):
            err.print(said, markup=False)


def _interrupted(
    out: Path,
    learners: list[roster.Learner],
    settings: JobSettings,
    forced: str,
    config: CourseConfig | None = None,
) -> int:
    """Say how many learners are saved after a Ctrl-C; the exit status. Saved: graded by this
    run, or kept by a rerun of it (not a record that this run, or the --force run it goes on
    from, grades again). With ``config`` (interrupted before the gradebook was being written),
    the gradebook and the class report are rebuilt from the learners' folders as they are,
    saying that the run was interrupted: they no longer show the last finished run while the
    learners' folders hold this one's grades (H34)."""
    done, left = 0, []
    for learner in learners:
        record = store.read_record(out, learner.id)
        if record is not None and (
            record.run_id == settings.run_id or resume.kept(record, settings, learner, forced)
        ):
            done += 1
        else:
            left.append(learner.id)
    if config is not None and done < len(learners):
        note = INTERRUPTED_NOTE.format(
            done=done,
            total=len(learners),
            left=report_model.who_text(tuple(left)),
            without=" without --force" if forced else "",
        )
        try:
            ids = [learner.id for learner in learners]
            class_output.rebuild(config, out, ids, note=note, ungraded=NOT_GRADED_YET)
        except (KeyboardInterrupt, OSError):
            pass  # a second Ctrl-C, a full disk: the learners' folders are what counts
    if done == len(learners):
        print(INTERRUPTED_REPORT.format(total=done, out=out), file=sys.stderr)
    else:
        template = INTERRUPTED_FORCED if forced else INTERRUPTED
        print(template.format(done=done, total=len(learners), out=out), file=sys.stderr)
    return _EXIT_INTERRUPTED


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return _EXIT_BAD
