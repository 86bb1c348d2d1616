"""`autograder grade-class`, `merge` and `publish`: a class into a gradebook, and its scores out."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.cli import shared
from autograder.cli.group import SHORT_HELP, cli


@cli.command("grade-class", short_help=SHORT_HELP["grade-class"])
@click.argument("roster_path", metavar="ROSTER", type=click.Path(path_type=Path))
@shared.out_folder_option(
    "Folder for the gradebook, the class report and one subfolder per learner."
)
@shared.course_option(
    "The course.toml to grade against (default: the nearest one above the current folder)."
)
@shared.jobs_option("Learners graded")
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
@shared.timeout_option()
@shared.seed_option("Base seed.")
@shared.quiet_option("No progress bar and no table; only problems.")
@shared.manifest_option(
    "The release manifest (.autograder/manifest.json): protected files a learner changed "
    "raise the gradebook's tamper flag."
)
@click.option(
    "--allow-unconfined",
    is_flag=True,
    help="In CI (GITHUB_ACTIONS or CI set to true), grade even when this machine only allows "
    "the process-group isolation level, where learner code reads the job's secrets; without "
    "it such a run is refused.",
)
def grade_class(**options) -> None:
    """Grade a whole class: ROSTER is a folder of learner repositories (one folder per learner)
    or a CSV with the columns learner,repo (local paths, file:// URLs, or clone URLs: https://,
    ssh://, git:// or user@host:path, copied into OUT/.repos first; a relative path is read
    from the CSV's folder, not the current one).

    Writes OUT/gradebook.csv, OUT/report.md, OUT/report.html and OUT/<learner>/ (results.json,
    summary.md, ...). Each learner is saved as soon as they are graded: after Ctrl-C or a
    crash, run the same command again to grade only the rest. One command writes OUT at a time:
    a second one stops at once, naming the first.

    Exit status: 0 every learner was graded, 1 some rows carry an error, 2 the run could not
    start (OUT busy, or unconfined in CI, included), 130 interrupted.
    """
    with shared.warm_workers(batch=True):
        from autograder.commands import grade_class as command

        code = command.main(**options)
    raise SystemExit(code)


@cli.command(short_help=SHORT_HELP["merge"])
@click.argument("shards", nargs=-1, required=True, type=click.Path(path_type=Path))
@shared.out_folder_option("Folder for the merged gradebook and class report.")
@shared.course_option("The course.toml the shards were graded against (default: the nearest one).")
@shared.quiet_option("Print no table; only problems.")
def merge(**options) -> None:
    """Merge the output folders of `grade-class --shard I/N` runs into one gradebook.

    OUT is a new folder, or that of an earlier merge of the same run, which this one adds to.
    Shards of different options, splits or rosters are refused; shards missing or whose run
    did not finish are said on stderr and in the class report.

    Exit status: 0 every merged learner was graded, 1 some rows carry an error, 2 nothing was
    merged (the reason on stderr), 3 shards of the run are missing or did not finish.
    """
    from autograder.commands import merge as command

    raise SystemExit(command.main(**options))


@cli.command(short_help=SHORT_HELP["publish"])
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--roster",
    "roster_path",
    required=True,
    type=click.Path(path_type=Path),
    help="The roster CSV the class was graded from; its github column (owner/name) or its "
    "clone URLs name each learner's repository.",
)
@shared.course_option(
    "The course.toml graded with (default: the nearest one above the current folder)."
)
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
@shared.pass_rule_option(
    "'all' or 'min_score:N': success or failure (default: [ci] pass_rule in course.toml)."
)
@click.option(
    "--resend", is_flag=True, help="Send again the statuses already sent for the same grade."
)
def publish(**options) -> None:
    """Publish the grades in OUT (a grade-class or merge output folder) on GitHub: a commit
    status on each graded commit of each learner's repository, through the REST API at
    $GITHUB_API_URL (default https://api.github.com) with the token in $GH_TOKEN.

    Only learners whose grade changed since the last publish are sent (OUT/<learner>/
    published.json records what was); rate limits are waited out. The token is never printed.

    Exit status: 0 sent (or nothing left to send), 1 some learners failed (the table says
    why), 2 nothing could be sent (the reason is printed).
    """
    from autograder.commands import publish_statuses as command

    raise SystemExit(command.main(**options))
