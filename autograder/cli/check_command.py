"""`autograder check`: the graders against the references, stubs, mutants and variants."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.cli import shared
from autograder.cli.group import SHORT_HELP, cli


@cli.command(short_help=SHORT_HELP["check"])
@shared.course_option(
    "The course.toml to check (default: the nearest one above the current folder)."
)
@shared.jobs_option("Cases graded")
@shared.component_option(
    "Check only this component's mutants and variants (repeatable); the references and "
    "the stubs are always checked."
)
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="A new (or empty) folder that keeps each case's repository (DIR/submissions) and its "
    "reports (DIR/results).",
)
@shared.timeout_option("code")
@shared.quiet_option("No progress bar.")
def check(**options) -> None:
    """Check the graders before a release: the references must score full marks, the stubs
    zero, every mutant (a reference with one catalogued mistake planted) must lose points in
    its own component only, with feedback that names the mistake, and every variant (a valid other
    way to write a reference) must keep full marks.

    Prints a table of cases, the mutation score and the variants line.

    Exit status: 0 everything holds, 1 some check failed, 2 the check cannot run (the reason
    is printed as one sentence).
    """
    with shared.warm_workers(batch=True):
        from autograder.commands import check as command

        code = command.main(**options)
    raise SystemExit(code)
