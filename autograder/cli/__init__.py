"""The `autograder` command line: a thin click layer over autograder.commands.*.main."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from autograder import __version__
from autograder.reports.files import CANNOT_WRITE, cannot_write  # noqa: F401 (CANNOT_WRITE: tests)


# Options several commands share: one definition each, so their names, types and units agree.
def _course_option(help_text: str):
    return click.option("--course", type=click.Path(dir_okay=False, path_type=Path), help=help_text)


def _timeout_option(whose: str = "learner code"):
    return click.option(
        "--timeout",
        "test_timeout",
        type=float,
        metavar="S",
        help=f"CPU seconds of {whose} allowed per test, at most three times as many in wall "
        "time (default: test_timeout in course.toml).",
    )


def _jobs_option(what: str):
    return click.option(
        "--jobs", "-j", type=int, metavar="N", help=f"{what} at once (default: one per core)."
    )


def _quiet_option(help_text: str):
    return click.option("--quiet", "-q", is_flag=True, help=help_text)


def _manifest_option(help_text: str):
    return click.option(
        "--manifest", type=click.Path(dir_okay=False, path_type=Path), help=help_text
    )


class _Commands(click.Group):
    """The command group. Run from a command line (click reads sys.argv), the process ends
    with ``os._exit`` once the command is done: after the exit handlers (temporary folders,
    logging) and a flush of stdout and stderr, but without the interpreter's teardown, which
    frees torch's modules one by one and took 0.6 to 0.7 s of a single `grade`
    (benchmarks/README.md). Called with arguments (click's CliRunner, a test) it returns or
    raises as usual."""

    def main(self, args=None, *rest, standalone_mode: bool = True, **extra):  # type: ignore[override]
        if args is not None or not standalone_mode:
            return super().main(args, *rest, standalone_mode=standalone_mode, **extra)
        from autograder.cli.closed_pipe import tolerate_closed_stdout
        from autograder.github.command_guard import no_workflow_commands

        tolerate_closed_stdout()  # `| head -1` must not change the exit status
        no_workflow_commands()  # no roster or learner text can act as a CI command
        try:
            return super().main(args, *rest, standalone_mode=standalone_mode, **extra)
        except SystemExit as stop:
            _leave(stop.code)

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        """A Ctrl-C that no command turned into its own sentence (one while the command was
        still starting, say importing torch) ends with one sentence and status 130, as the
        commands' help promises, not click's 'Aborted!' and status 1."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(INTERRUPTED_EARLY, err=True)
            raise SystemExit(130) from None
        except OSError as error:
            # Every report and gradebook row is written whole or not at all (atomic writes),
            # so what the command saved before the disk filled is intact.
            sentence = cannot_write(error)
            if sentence is None:
                raise
            click.echo(sentence, err=True)
            raise SystemExit(2) from None


#: One line per command in `autograder --help` (click would cut each docstring's first
#: sentence at the terminal's width, mid-sentence): each fits 80 columns whole.
SHORT_HELP = {
    "check": "Check the graders: references, stubs, mutants, variants.",
    "export": "Fill your Canvas or Moodle gradebook file with the totals.",
    "grade": "Grade learner repositories; reports and a table of points.",
    "grade-class": "Grade a whole class (a roster) into a gradebook.",
    "merge": "Merge the output folders of grade-class --shard runs.",
    "publish": "Send a gradebook's grades to GitHub as commit statuses.",
    "release": "Build the learner repository: stubs, visible graders, CI.",
    "similarity": "Flag pairs of learners whose code is unusually alike.",
}
INTERRUPTED_EARLY = "Interrupted before anything was graded; run the same command again."


def _leave(code: object) -> None:
    """Exit with click's status as ``sys.exit`` would, skipping the interpreter's teardown
    when it is safe: the exit handlers can be run first, no other non-daemon thread is left
    (a normal exit would wait for it) and no profiler or tracer runs (``python -m cProfile``
    writes its results after the command returns); else a normal exit."""
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    watched = sys.getprofile() is not None or sys.gettrace() is not None
    if run_exit_handlers is None or watched or any(not t.daemon for t in others):
        raise SystemExit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("sentence") prints the sentence and exits 1
        print(code, file=sys.stderr)
        status = 1
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # a closed pipe (`| head`), a closed
            pass  # stream, or none at all (started with `>&-`: sys.stdout is None)
    os._exit(status)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="autograder")
def cli() -> None:
    """Grade Transformers 101 style assignments: run the course's graders against learner
    code in an isolated worker process and write reports.

    Run `autograder COMMAND --help` for what each command does.
    """


@cli.command(short_help=SHORT_HELP["grade"])
@click.argument("submissions", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the reports. One submission: the reports go straight into it "
    "(default ./grades/NAME). Several: one subfolder per submission (default ./grades).",
)
@_course_option(
    "The course.toml to grade against (default: the nearest one above the current "
    "folder; never one inside a submission)."
)
@click.option(
    "--visible-only",
    is_flag=True,
    help="Run only the visible tests, as a learner's own repository has them.",
)
@_timeout_option()
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    metavar="N",
    help="Base seed for the random inputs; the same seed gives the same inputs.",
)
@_quiet_option("Print no tables; only problems.")
@click.option(
    "--component",
    "components",
    multiple=True,
    metavar="NAME",
    help="Run only this component's tests (repeatable); the others score zero.",
)
@click.option(
    "--github",
    is_flag=True,
    help="In a GitHub Actions job: annotate failing components, write the job summary, step "
    "outputs and comment.md, and exit by --pass-rule. One submission only.",
)
@click.option(
    "--pass-rule",
    metavar="RULE",
    help="With --github: 'all' (every test passes) or 'min_score:N' (at least N points) "
    "(default: [ci] pass_rule in course.toml, else 'all').",
)
@_manifest_option(
    "A release manifest (.autograder/manifest.json): report protected files the "
    "submission changed, in results.json and the job summary."
)
def grade(
    submissions: tuple[Path, ...],
    out: Path | None,
    course: Path | None,
    visible_only: bool,
    test_timeout: float | None,
    seed: int,
    quiet: bool,
    components: tuple[str, ...],
    github: bool,
    pass_rule: str | None,
    manifest: Path | None,
) -> None:
    """Grade one or more SUBMISSIONS (learner repositories, or their package folders).

    For each one this writes results.json (Gradescope), summary.md (for the learner),
    junit.xml and grader.log, and prints a table of points per component.

    Exit status: 0 when every test passed, 1 when some failed, 2 when a submission could not
    be graded at all (the reason is printed as one sentence), 130 interrupted.

    \b
    Examples:
      autograder grade .                       grade your own repository
      autograder grade examples/submissions/*/  grade a class, reports under ./grades
    """
    with _warm_workers():
        from autograder.commands import grade as command

        code = command.main(
            submissions=list(submissions),
            out=out,
            course=course,
            visible_only=visible_only,
            test_timeout=test_timeout,
            seed=seed,
            quiet=quiet,
            components=list(components),
            github=github,
            pass_rule=pass_rule,
            manifest=manifest,
        )
    raise SystemExit(code)


@contextmanager
def _warm_workers(*, batch: bool = False) -> Iterator[None]:
    """A fork server for this command's untrusted workers (runtime/harness/zygote_client.py),
    started before the command imports torch, so that the two imports overlap. ``batch``: then the
    fork server of the batch's session process (batch/fork_server.py), which every learner of
    a batch waits for, before this command's own imports and argument checks; after the zygote,
    whose address it must inherit."""
    from autograder.runtime.harness import zygote_client

    with zygote_client.serving():
        if batch:
            from autograder.batch import fork_server

            fork_server.start()
        yield


@cli.command(short_help=SHORT_HELP["release"])
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A new (or empty) folder for the learner repository.",
)
@_course_option("The course.toml to release (default: the nearest one above the current folder).")
@click.option(
    "--pass-rule",
    metavar="RULE",
    help="When the learner's grade job passes: 'all' or 'min_score:N' "
    "(default: [ci] pass_rule in course.toml, else 'all').",
)
@click.option(
    "--notes",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Markdown for the README's 'Where the course notes help' section.",
)
@click.option(
    "--notebook",
    is_flag=True,
    help="Also generate the learner notebook with nbgrader (needs the notebook extra; slow).",
)
def release(
    out: Path, course: Path | None, pass_rule: str | None, notes: Path | None, notebook: bool
) -> None:
    """Build the learner repository in OUT: stubs, the autograder package, the visible tests,
    course.toml, pyproject.toml, a README, .github/workflows/grade.yml and a manifest of
    protected files. Never the references or the hidden tests. Same input, same bytes.

    Exit status: 0 written, 2 not written (the reason is printed).
    """
    from autograder.commands import release as command

    raise SystemExit(
        command.main(out=out, course=course, pass_rule=pass_rule, notes=notes, notebook=notebook)
    )


@cli.command("grade-class", short_help=SHORT_HELP["grade-class"])
@click.argument("roster", type=click.Path(path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the gradebook, the class report and one subfolder per learner.",
)
@_course_option(
    "The course.toml to grade against (default: the nearest one above the current folder)."
)
@_jobs_option("Learners graded")
@click.option(
    "--deadline",
    metavar="ISO8601",
    help="Grade each learner's last commit whose committer time is at or before this time, "
    "e.g. 2026-08-15T23:59:00+05:30.",
)
@click.option("--shard", metavar="I/N", help="Grade only shard I of N of the roster (see `merge`).")
@click.option(
    "--force",
    is_flag=True,
    help="Grade every learner again, also with other settings (--deadline, --timeout, --seed, "
    "--manifest) than the grades in --out were made with; without it such a run is refused.",
)
@click.option(
    "--regrade",
    "regrade",
    multiple=True,
    metavar="LEARNER",
    help="Grade this learner again even if they have a result in --out (repeatable): after "
    "they fixed their repository, or for a regrade request; the others are kept.",
)
@click.option(
    "--regrade-moved",
    is_flag=True,
    help="Also grade again every learner whose repository's HEAD is another commit than "
    "their row in --out names (git ls-remote for clone URLs): a scheduled run grades only "
    "those who pushed since.",
)
@_timeout_option()
@click.option("--seed", type=int, default=0, show_default=True, metavar="N", help="Base seed.")
@_quiet_option("No progress bar and no table; only problems.")
@_manifest_option(
    "The release manifest (.autograder/manifest.json): protected files a learner changed "
    "raise the gradebook's tamper flag."
)
def grade_class(
    roster: Path,
    out: Path,
    course: Path | None,
    jobs: int | None,
    deadline: str | None,
    shard: str | None,
    force: bool,
    regrade: tuple[str, ...],
    regrade_moved: bool,
    test_timeout: float | None,
    seed: int,
    quiet: bool,
    manifest: Path | None,
) -> None:
    """Grade a whole class: ROSTER is a folder of learner repositories (one folder per learner)
    or a CSV with the columns learner,repo (local paths, file:// URLs, or clone URLs: https://,
    ssh://, git:// or user@host:path, copied into OUT/.repos first; a relative path is read
    from the CSV's folder, not the current one).

    Writes OUT/gradebook.csv, OUT/report.md, OUT/report.html and OUT/<learner>/ (results.json,
    summary.md, ...). Each learner is saved as soon as they are graded: after Ctrl-C or a
    crash, run the same command again to grade only the rest. One command writes OUT at a time:
    a second one stops at once, naming the first.

    Exit status: 0 every learner was graded, 1 some rows carry an error, 2 the run could not
    start (OUT busy included), 130 interrupted.
    """
    with _warm_workers(batch=True):
        from autograder.commands import grade_class as command

        code = command.main(
            roster_path=roster,
            out=out,
            course=course,
            jobs=jobs,
            deadline=deadline,
            shard=shard,
            force=force,
            regrade=regrade,
            regrade_moved=regrade_moved,
            test_timeout=test_timeout,
            seed=seed,
            quiet=quiet,
            manifest=manifest,
        )
    raise SystemExit(code)


@cli.command(short_help=SHORT_HELP["merge"])
@click.argument("shards", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the merged gradebook and class report.",
)
@_course_option("The course.toml the shards were graded against (default: the nearest one).")
@_quiet_option("Print no table; only problems.")
def merge(shards: tuple[Path, ...], out: Path, course: Path | None, quiet: bool) -> None:
    """Merge the output folders of `grade-class --shard I/N` runs into one gradebook.

    OUT is a new folder, or that of an earlier merge of the same run, which this one adds to.
    Shards of different options, splits or rosters are refused; shards missing or whose run
    did not finish are said on stderr and in the class report.

    Exit status: 0 every merged learner was graded, 1 some rows carry an error, 2 nothing was
    merged (the reason on stderr), 3 shards of the run are missing or did not finish.
    """
    from autograder.commands import merge as command

    raise SystemExit(command.main(shards=list(shards), out=out, course=course, quiet=quiet))


@cli.command(short_help=SHORT_HELP["publish"])
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--roster",
    "roster",
    required=True,
    type=click.Path(path_type=Path),
    help="The roster CSV the class was graded from; its github column (owner/name) or its "
    "clone URLs name each learner's repository.",
)
@_course_option("The course.toml graded with (default: the nearest one above the current folder).")
@click.option(
    "--statuses", is_flag=True, help="Set a commit status on each graded commit (the score)."
)
@click.option(
    "--comment",
    is_flag=True,
    help="Post or edit one score comment on the learner's open pull requests whose head is "
    "the graded commit.",
)
@click.option(
    "--dry-run", is_flag=True, help="Print each request instead of sending it (needs no token)."
)
@click.option(
    "--pass-rule",
    metavar="RULE",
    help="'all' or 'min_score:N': success or failure (default: [ci] pass_rule in course.toml).",
)
@click.option(
    "--resend", is_flag=True, help="Send again the statuses already sent for the same grade."
)
def publish(
    out: Path,
    roster: Path,
    course: Path | None,
    statuses: bool,
    comment: bool,
    dry_run: bool,
    pass_rule: str | None,
    resend: bool,
) -> None:
    """Publish the grades in OUT (a grade-class or merge output folder) on GitHub: a commit
    status on each graded commit of each learner's repository, through the REST API at
    $GITHUB_API_URL (default https://api.github.com) with the token in $GH_TOKEN.

    Only learners whose grade changed since the last publish are sent (OUT/<learner>/
    published.json records what was); rate limits are waited out. The token is never printed.

    Exit status: 0 sent (or nothing left to send), 1 some learners failed (the table says
    why), 2 nothing could be sent (the reason is printed).
    """
    from autograder.commands import publish_statuses as command

    raise SystemExit(
        command.main(
            out=out,
            roster_path=roster,
            course=course,
            statuses=statuses,
            comment=comment,
            dry_run=dry_run,
            pass_rule=pass_rule,
            resend=resend,
        )
    )


@cli.command(short_help=SHORT_HELP["check"])
@_course_option("The course.toml to check (default: the nearest one above the current folder).")
@_jobs_option("Cases graded")
@click.option(
    "--component",
    "components",
    multiple=True,
    metavar="NAME",
    help="Check only this component's mutants and variants (repeatable); the references and "
    "the stubs are always checked.",
)
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="A new (or empty) folder that keeps each case's repository (DIR/submissions) and its "
    "reports (DIR/results).",
)
@_timeout_option("code")
@_quiet_option("No progress bar.")
def check(
    course: Path | None,
    jobs: int | None,
    components: tuple[str, ...],
    keep: Path | None,
    test_timeout: float | None,
    quiet: bool,
) -> None:
    """Check the graders before a release: the references must score full marks, the stubs
    zero, every mutant (a reference with one catalogued mistake planted) must lose points in
    its own component only, with feedback that names the mistake, and every variant (a valid other
    way to write a reference) must keep full marks.

    Prints a table of cases, the mutation score and the variants line.

    Exit status: 0 everything holds, 1 some check failed, 2 the check cannot run (the reason
    is printed as one sentence).
    """
    with _warm_workers(batch=True):
        from autograder.commands import check as command

        code = command.main(
            course=course,
            jobs=jobs,
            components=list(components),
            keep=keep,
            test_timeout=test_timeout,
            quiet=quiet,
        )
    raise SystemExit(code)


from autograder.commands.term_cli import export, similarity  # noqa: E402  (end of term)

for _command in (export, similarity):
    _command.short_help = SHORT_HELP[_command.name]
    cli.add_command(_command)
