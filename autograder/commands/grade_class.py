"""`autograder grade-class ROSTER --out DIR`: grade a whole class into a gradebook.

1. read the roster (a folder of repositories or a CSV), keep this shard (--shard i/n);
2. lock DIR for this command (gradebook/lock.py: a second command writing DIR meanwhile is
   refused with one sentence), clear DIR/.partial; skip learners whose
   DIR/<learner>/record.json was graded with the same settings (unless --force): this is what
   makes a rerun resume;
3. clone or update the copies of those given by clone URL (gradebook/fetch.py), then grade
   them in parallel, --jobs at a time, with a progress bar that names the learners
   being graded and for how long (progress/in_progress.py): one session process
   collects the graders once and forks harness children that grade one learner after another
   (batch/session.py); each learner's folder is committed atomically;
4. rebuild DIR/gradebook.csv from the records (learner order), write the class report, print
   a per-component table. The components are course.toml's, then the course's notebook
   assignments (`notebook`): a learner whose repository has no notebook has an empty cell there.

Exit status: 0 every learner was graded; 1 some rows carry an error; 2 the run could not start
(bad roster, course or option), with one sentence on stderr; 130 interrupted (rerun to resume).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from autograder.batch import fork_server
from autograder.batch.learner_job import failed_record
from autograder.batch.processes import jobs_or_cores, remove_folder
from autograder.batch.session import EXPECTED_DIR, SCRATCH_PREFIX, run_batch
from autograder.config import (
    CourseConfig,
    CourseConfigError,
    OptionError,
    check_timeout,
    find_course_file,
    load_course,
)
from autograder.gradebook import (
    changed_settings,
    contents,
    fetch,
    lock,
    newer_commits,
    remote_heads,
    report,
    roster,
    snapshot,
    store,
)
from autograder.gradebook.settings import (
    JobSettings,
    instant_settings,
    run_settings,
    settings_key,
    shared_options,
)
from autograder.notebook import notebook_components
from autograder.progress.in_progress import InProgress, InProgressColumn
from autograder.progress.log_lines import LogLines
from autograder.release.manifest import ManifestError, read_manifest
from autograder.results import points

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
WRITTEN = (
    "Gradebook: {gradebook}; class report: {markdown} and {html}; each learner's reports in "
    "{learner}/"
)
NOT_IN_ROSTER = "--regrade names {names}, who the roster {roster} does not list."
UNREADABLE = "The course's files or the manifest could not be read ({detail})."
REGRADE_AND_FORCE = (
    "--regrade grades the named learners again and keeps the others, --force grades everyone "
    "again: give one of them."
)
_EXIT_OK, _EXIT_ERRORS, _EXIT_BAD, _EXIT_INTERRUPTED = 0, 1, 2, 130


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
) -> int:
    """Grade the roster into out; return the exit status of the module docstring.
    ``regrade``: learner ids graded again even when they have a result (--regrade);
    ``regrade_moved``: also those whose repository moved on since (gradebook/remote_heads.py)."""
    try:
        config = load_course(course if course else find_course_file(Path.cwd()))
        selection = roster.parse_shard(shard)
        everyone = roster.read_roster(roster_path)
        learners = roster.shard(everyone, selection)
        roster_id = store.roster_digest([learner.id for learner in everyone])
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
    except (CourseConfigError, roster.RosterError, ValueError, ManifestError) as error:
        return _error(str(error))
    except OSError as error:  # a grader file or the manifest could not be read
        return _error(UNREADABLE.format(detail=error))
    try:
        jobs = jobs_or_cores(jobs)
        check_timeout(test_timeout)
    except OptionError as error:
        return _error(str(error))

    shown = Path(out)
    out = Path(out).resolve()
    if Path(roster_path).is_dir() and out.is_relative_to(Path(roster_path).resolve()):
        return _error(OUT_IN_ROSTER.format(out=out, roster=roster_path))
    out.mkdir(parents=True, exist_ok=True)
    try:
        held = lock.hold(out, "grade-class")
    except lock.LockError as busy:
        return _error(str(busy))
    with held:  # until the gradebook is written: a second command would race on DIR
        ids = [learner.id for learner in learners]
        refusal = store.foreign(out, ids)
        if refusal:
            return _error(refusal)
        store.clear_partial(out)
        # Made by the command itself: a folder it cannot write in (a read-only --out that
        # exists) ends here with the command line's one sentence, not in the session
        # process's traceback.
        (out / store.PARTIAL_DIR).mkdir()
        learners = fetch.locate(learners, out)  # a clone URL's copy: DIR/.repos/<id>.git
        records = {learner.id: store.read_record(out, learner.id) for learner in learners}
        if regrade_moved:  # asks each server its HEAD: fetches only the learners that moved
            regrade = [*regrade, *remote_heads.moved(learners, records, _stderr)]
        deadline = _as_recorded(deadline, records.values())
        settings = JobSettings(
            course=config.path,
            out=out,
            deadline=deadline,
            # the course's own when not given: --timeout 10 and none are the same setting
            test_timeout=config.limits.test_timeout if test_timeout is None else test_timeout,
            seed=seed,
            run_id=uuid.uuid4().hex,
            parent_pid=os.getpid(),
            manifest=manifest,
            shard=f"{selection[0]}/{selection[1]}" if selection else "",
            course_digest=contents.course_digest(course_parts),
            manifest_digest=manifest_digest,
            course_parts=tuple(course_parts.items()),
        )
        if not force:
            refused = changed_settings.refusal(
                records.values(), settings, forced=store.forced_since(out), run=store.read_run(out)
            )
            if refused:
                return _error(refused)
        run = (out, settings.shard, run_settings(settings))
        written = {"same_as": instant_settings(settings), "options": shared_options(settings)}
        if selection:  # merge gives a missing shard's learners a row each
            written["everyone"] = sorted(learner.id for learner in everyone)
        store.write_run(*run, roster=roster_id, complete=False, learners=ids, **written)
        if force:  # until a run grades everyone, a rerun without --force goes on from here
            store.mark_forced(out, datetime.now(UTC).isoformat(timespec="seconds"))
        forced = store.forced_since(out)
        pending = [
            learner
            for learner in learners
            if force
            or learner.id in regrade
            or not _kept(records[learner.id], settings, learner, forced)
        ]
        # soft_wrap: in a log (no terminal, 80 columns) a sentence stays on one line (H49)
        err = Console(stderr=True, highlight=False, quiet=quiet, soft_wrap=True)
        if not pending:
            err.print(ALL_SAVED.format(total=len(learners), out=out))
        elif len(pending) < len(learners):
            err.print(
                RESUMING.format(done=len(learners) - len(pending), total=len(learners), out=out)
            )
        if deadline is None:  # said even with --quiet: those rows no longer show the repository
            pending_ids = {learner.id for learner in pending}
            kept_rows = [(lr, records[lr.id]) for lr in learners if lr.id not in pending_ids]
            newer = newer_commits.note(newer_commits.moved(kept_rows), out)
            if newer and quiet:
                print(newer, file=sys.stderr)
            elif newer:
                err.print(newer, markup=False)
        if not force:  # the roster gives another repository or extension: graded again
            for said in changed_settings.roster_changes(pending, records, run[2], settings, out):
                err.print(said, markup=False)
        try:
            pending = fetch_pending(pending, out, err)
            kept = {learner.id for learner in learners} - {learner.id for learner in pending}
            failed = sum(_error_row(records[i]) for i in kept)
            # The class report's figure library loads while the learners are graded.
            grade_pending(
                settings, pending, len(learners), jobs, err, failed=failed,
                meanwhile=report.figure_library,
            )  # fmt: skip
            store.clear_forced(out)  # everyone is graded since the --force run began
            store.write_run(*run, roster=roster_id, complete=True, learners=ids, **written)
        except KeyboardInterrupt:
            return _interrupted(out, learners, settings, forced, config)
        except (fetch.FetchError, FileExistsError) as error:  # FileExistsError: store.FOREIGN,
            return _error(str(error))  # something put at a learner's name in DIR meanwhile
        try:
            return finish(config, out, ids, quiet=quiet, shown=shown)
        except KeyboardInterrupt:  # not 'before anything was graded', the command line's sentence
            return _interrupted(out, learners, settings, forced)


def fetch_pending(pending: list[roster.Learner], out: Path, err: Console) -> list[roster.Learner]:
    """Clone or update the copies of the pending learners given by clone URL (fetch.py), with
    a progress bar; a learner whose clone failed gets that error as their row."""
    count = sum(bool(learner.url) for learner in pending)
    if not count:
        return pending
    columns = (TextColumn("[bold]fetching"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("fetching", total=count)

        def say(line: str) -> None:  # a problem: said even with --quiet
            if err.quiet:
                print(line, file=sys.stderr)
            else:
                progress.console.print(line, markup=False, highlight=False)

        return fetch.fetch(
            pending, out, say=say, done=lambda learner: progress.update(task, advance=1)
        )


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
            record.run_id == settings.run_id or _kept(record, settings, learner, forced)
        ):
            done += 1
        else:
            left.append(learner.id)
    if config is not None and done < len(learners):
        note = INTERRUPTED_NOTE.format(
            done=done,
            total=len(learners),
            left=report.who_text(tuple(left)),
            without=" without --force" if forced else "",
        )
        try:
            ids = [learner.id for learner in learners]
            rebuild(config, out, ids, note=note, ungraded=NOT_GRADED_YET)
        except (KeyboardInterrupt, OSError):
            pass  # a second Ctrl-C, a full disk: the learners' folders are what counts
    if done == len(learners):
        print(INTERRUPTED_REPORT.format(total=done, out=out), file=sys.stderr)
    else:
        template = INTERRUPTED_FORCED if forced else INTERRUPTED
        print(template.format(done=done, total=len(learners), out=out), file=sys.stderr)
    return _EXIT_INTERRUPTED


def finish(
    config: CourseConfig,
    out: Path,
    learners: list[str] | None,
    *,
    quiet: bool,
    shown: Path | None = None,
    ungraded: store.Ungraded = "",
) -> int:
    """Rebuild the gradebook and the report from out; print the table and where the files
    are (``shown``: out as the user typed it); the exit status. ``ungraded``: as rebuild's."""
    records = rebuild(config, out, learners, ungraded=ungraded)
    console = None if quiet else Console(highlight=False)
    if console is not None:
        console.print(component_table(config, records))
    for line in problem_lines(records):
        print(line, file=sys.stderr)
    if console is not None:
        console.print(where_line(shown or out), markup=False, soft_wrap=True)
    return _EXIT_ERRORS if any(r.failed for r in records) else _EXIT_OK


ERRORS_SHOWN = 20  # error rows printed one by one; then how many more
MORE_ERRORS = "... and {count} more rows with an error: see the class report ({report})."
NOTHING_LINE = (
    "{count} learner{s} gave nothing to grade (an empty repository, no commit, or none before "
    "the deadline): {who}; their rows say why."
)
NOT_YET_LINE = "{count} learner{s} not graded yet: {who}; their rows say why."


def problem_lines(records: list[store.LearnerRecord]) -> list[str]:
    """What the command says on stderr of the rows without a grade: each error row (at most
    ERRORS_SHOWN), then one line for the learners who gave nothing to grade and one for those
    not graded yet (H49: a line each, in the present tense, repeated on every rerun and one per
    learner of a missing shard)."""
    errors = [r for r in records if r.grading_error]
    lines = [f"{r.learner}: {r.error}" for r in errors[:ERRORS_SHOWN]]
    if len(errors) > ERRORS_SHOWN:
        lines.append(
            MORE_ERRORS.format(count=len(errors) - ERRORS_SHOWN, report=report.MARKDOWN_FILE)
        )
    for template, chosen in (
        (NOTHING_LINE, [r.learner for r in records if r.nothing_submitted and not r.pending]),
        (NOT_YET_LINE, [r.learner for r in records if r.pending]),
    ):
        if chosen:
            s = "" if len(chosen) == 1 else "s"
            lines.append(
                template.format(count=len(chosen), s=s, who=report.who_text(tuple(chosen)))
            )
    return lines


def rebuild(
    config: CourseConfig,
    out: Path,
    learners: list[str] | None,
    *,
    note: str = "",
    ungraded: store.Ungraded = "",
) -> list[store.LearnerRecord]:
    """gradebook.csv and the class report from the records in out (those of ``learners`` when
    given; ``note``: the report's first sentence); the records they show. ``ungraded``: the
    error (store.Ungraded) of the row given to each of ``learners`` without a record (an
    interrupted run's gradebook still has a row for every learner)."""
    store.clear_partial(out)
    parts = class_components(config)
    records = store.write_gradebook(out, [c.name for c in parts], learners, ungraded=ungraded)
    report.write_report(out, records, parts, config.course.name, note=note)
    return records


def where_line(out: Path) -> str:
    """The command's last line: where the gradebook, the class report and the learners' own
    reports are."""
    return WRITTEN.format(
        gradebook=out / store.GRADEBOOK_FILE,
        markdown=out / report.MARKDOWN_FILE,
        html=report.HTML_FILE,
        learner=out / "<learner>",
    )


def class_components(config: CourseConfig) -> list[report.Component]:
    """The gradebook's components: course.toml's, then the notebook assignments (optional:
    graded only for learners whose repository holds the notebook)."""
    parts = [report.Component(c.name, c.title, float(c.points)) for c in config.components]
    for name, title, value in notebook_components(config.root):
        parts.append(report.Component(name, title, float(value), optional=True))
    return parts


def component_table(config: CourseConfig, records: list[store.LearnerRecord]) -> Table:
    """Per component: mean score and learners with full marks (of those graded for it); the
    total as the footer."""
    graded = [r for r in records if not r.failed]
    parts = report.submitted_components(graded, class_components(config))
    table = Table(
        title=f"{config.course.name}: {len(graded)} of {len(records)} graded",
        title_justify="left",
        show_footer=True,
    )
    table.add_column("Component", footer="Total")
    mean_total = sum(r.total or 0.0 for r in graded) / len(graded) if graded else 0.0
    max_total = sum(c.points for c in parts)
    footer = f"{points(mean_total)} / {points(max_total)}" if graded else report.NO_LEARNER
    table.add_column("Mean", justify="right", footer=footer)
    table.add_column("Full marks", justify="right")
    for c in parts:
        scores = report.component_scores(graded, c)
        mean = sum(scores) / len(scores) if scores else 0.0
        full = sum(1 for s in scores if s >= c.points - 1e-9)
        shown = f"{points(mean)} / {points(c.points)}" if scores else report.NO_LEARNER
        table.add_row(c.title, shown, f"{full} / {len(scores)}")
    return table


def _as_recorded(deadline: str | None, records: Iterable[store.LearnerRecord | None]) -> str | None:
    """``deadline`` as DIR's records write it when they name the same instant in other words
    (2026-08-15T23:59:00+05:30 and 2026-08-15T18:29:00Z): a rerun that writes the deadline
    differently keeps their grades instead of regrading everyone, and the report names one
    deadline."""
    if deadline is None:
        return None
    moment = snapshot.parse_deadline(deadline)
    for recorded in sorted({r.deadline for r in records if r is not None and r.deadline}):
        try:
            if snapshot.parse_deadline(recorded) == moment:
                return recorded
        except ValueError:  # a record of a damaged or hand-edited folder: not this instant
            continue
    return deadline


def _reusable(record: store.LearnerRecord | None, settings: JobSettings, learner) -> bool:
    return record is not None and record.key == settings_key(settings, learner)


def _error_row(record: store.LearnerRecord | None) -> bool:
    """What the progress bar counts as an error: a learner the grader could not grade (not one
    who gave nothing to grade; no row at all after the learner's turn: an error)."""
    return record is None or record.grading_error


def _kept(record: store.LearnerRecord | None, settings: JobSettings, learner, forced: str) -> bool:
    """Whether a rerun keeps the record: the same settings, and not older than an unfinished
    --force run (``forced``, ISO 8601 UTC, or "")."""
    if not _reusable(record, settings, learner):
        return False
    return not forced or record.graded_at >= forced


def grade_pending(
    settings: JobSettings,
    pending: list[roster.Learner],
    total: int,
    jobs: int,
    err: Console,
    *,
    label: str = "grading",
    failed: int = 0,
    meanwhile: Callable[[], object] | None = None,
) -> None:
    """Grade pending learners into settings.out, `jobs` at a time, with a progress bar on err
    (`label` names the work; `failed`: the errors of learners kept from before, which its
    count starts from, so that it ends equal to the error rows, those with nothing submitted
    aside). One session process collects
    the graders once and forks harness children that grade one learner after another
    (batch/session.py); it is itself a fork
    of a warm server (numpy, torch, pytest and the framework imported). Also `autograder
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
    in_progress = InProgress(settings.out, (learner.id for learner in pending))
    columns = (
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("errors {task.fields[failed]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        InProgressColumn(in_progress),
    )
    left = {learner.id: learner for learner in pending}
    done = total - len(pending)
    lines = None  # no terminal, no bar drawn: plain lines instead
    if not err.is_terminal and not err.quiet:
        lines = LogLines(err, label, total, started=done)
    # Without a terminal the plain lines are the progress: rich would print its bar once, at
    # the end, in box characters (H49)
    with Progress(*columns, console=err, transient=False, disable=lines is not None) as progress:
        task = progress.add_task("grading", total=total, completed=done, failed=failed)

        def advance(learner_id: str) -> None:
            nonlocal failed, done
            failed += _error_row(store.read_record(settings.out, learner_id))
            done += 1
            progress.update(task, advance=1, failed=failed)
            if lines is not None:
                lines.update(done, failed, in_progress.describe())

        try:
            _start_uninterrupted(process)
            if meanwhile is not None:
                threading.Thread(target=meanwhile, daemon=True, name="meanwhile").start()
            writer.close()
            while left:
                in_progress.refresh()
                if not reader.poll(1.0):
                    if lines is not None:  # a line at least every minute, also while stuck
                        lines.update(done, failed, in_progress.describe())
                    continue
                try:
                    learner_id = reader.recv()
                except EOFError:  # the session process is gone
                    break
                if left.pop(learner_id, None) is not None:
                    advance(learner_id)
                    in_progress.refresh()  # their folder is in place: no longer in progress
            process.join()
            in_progress.refresh()  # whom the session's children had begun to grade
            for learner in list(left.values()):  # the session died before reporting them
                reached = learner.id in in_progress.since
                failed_record(settings, learner, process.exitcode, reached=reached)
                advance(learner.id)
        except BaseException:
            if process.pid is not None:  # not when stopped while the fork server was starting
                process.terminate()
                process.join(5)
            raise
        finally:
            in_progress.clear()  # the bar stays on screen: no learner named as still running
            remove_folder(scratch)
            # The session removes the shared expected values when it ends on its own; not when
            # it is stopped (Ctrl-C here) or killed: they must not outlive the batch in DIR.
            remove_folder(settings.out / EXPECTED_DIR)


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


ALL_SAVED = (
    "All {total} learners already have a result in {out} from the same settings; writing the "
    "gradebook and the class report from them (--force regrades everyone)."
)
RESUMING = (
    "{done} of {total} learners already have a result in {out} from the same settings; grading "
    "the others (--force regrades everyone)."
)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return _EXIT_BAD
