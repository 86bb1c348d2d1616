"""The click commands `export` and `similarity` (end of term).

`autograder export` and `similarity`: the instructor's end-of-term commands, over
commands/export.py and commands/similarity.py."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.cli import shared
from autograder.cli.group import SHORT_HELP, cli

FILE = click.Path(dir_okay=False, path_type=Path)
FOLDER = click.Path(file_okay=False, path_type=Path)


@cli.command("export", short_help=SHORT_HELP["export"])
@click.argument("out_dir", metavar="DIR", type=FOLDER)
@click.option("--canvas", type=FILE, metavar="TEMPLATE", help="Your Canvas gradebook export (CSV).")
@click.option(
    "--moodle", type=FILE, metavar="TEMPLATE", help="Your Moodle grade export (plain text file)."
)
@click.option(
    "--column",
    required=True,
    metavar="NAME",
    help="The assignment column to fill: its heading, or its name without the id Canvas adds "
    "('Transformers 101' for 'Transformers 101 (12345)'); a new name adds a column, which Canvas "
    "imports as a new assignment (in Moodle, map it to a new grade item).",
)
@click.option("--out", required=True, type=FILE, help="The filled copy to import into the LMS.")
@click.option(
    "--match",
    metavar="COLUMN",
    help="The template's column that identifies each learner (default: 'SIS Login ID' for "
    "Canvas, 'Email address' for Moodle), compared with the learner id or --roster-column.",
)
@click.option("--roster", type=FILE, help="The roster CSV, for --roster-column.")
@click.option(
    "--roster-column",
    "roster_column_name",
    metavar="NAME",
    help="Match --match against this column of --roster (such as email) instead of the learner id.",
)
@click.option(
    "--missing-as-zero",
    is_flag=True,
    help="Export 0 for a learner without a grade (an error row, nothing to grade), not an "
    "empty cell.",
)
@shared.course_option("The course.toml (default: the nearest one above this folder).")
def export(**options) -> None:
    """Put the totals of DIR/gradebook.csv (after any late penalty) into your LMS's own
    gradebook export, ready to import: every other column, row, quote, BOM and line ending
    stays as the template has it; the Points Possible row gets the course's total.

    Exit status: 0 every learner matched, 1 OUT was written but some learners are only in the
    gradebook or only in the template (listed on stderr), 2 nothing was written.
    """
    from autograder.commands import export as command

    raise SystemExit(command.main(**options))


@cli.command("similarity", short_help=SHORT_HELP["similarity"])
@click.argument("out_dir", metavar="DIR", type=FOLDER)
@shared.course_option("The course.toml (default: the nearest one above this folder).")
@shared.quiet_option("Name only the flagged pairs.")
def similarity(**options) -> None:
    """Compare the code of every pair of graded learners in DIR (a grade-class or merge
    output), per component and on the whole package, and flag the pairs far above what the
    class shares anyway. Writes DIR/similarity.csv and DIR/similarity.html (the flagged pairs
    side by side) and the class report again, which links them.

    Exit status: 0 no pair flagged, 1 some pairs flagged, 2 the check could not run.
    """
    from autograder.commands import similarity as command

    raise SystemExit(command.main(**options))
