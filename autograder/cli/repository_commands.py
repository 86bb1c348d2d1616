"""`autograder grade` and `autograder release`: one learner repository graded, or built."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.cli import shared
from autograder.cli.group import SHORT_HELP, cli


@cli.command(short_help=SHORT_HELP["grade"])
@click.argument("submissions", nargs=-1, required=True, type=click.Path(path_type=Path))
@shared.out_folder_option(
    "Folder for the reports. One submission: the reports go straight into it "
    "(default ./grades/NAME). Several: one subfolder per submission (default ./grades).",
    required=False,
)
@shared.course_option(
    "The course.toml to grade against (default: the nearest one above the current "
    "folder; never one inside a submission)."
)
@click.option(
    "--visible-only",
    is_flag=True,
    help="Run only the visible tests, as a learner's own repository has them.",
)
@shared.timeout_option()
@shared.seed_option("Base seed for the random inputs; the same seed gives the same inputs.")
@shared.quiet_option("Print no tables; only problems.")
@shared.component_option("Run only this component's tests (repeatable); the others score zero.")
@click.option(
    "--github",
    is_flag=True,
    help="In a GitHub Actions job: annotate failing components, write the job summary, step "
    "outputs and comment.md, and exit by --pass-rule. One submission only.",
)
@shared.pass_rule_option(
    "With --github: 'all' (every test passes) or 'min_score:N' (at least N points) "
    "(default: [ci] pass_rule in course.toml, else 'all')."
)
@shared.manifest_option(
    "A release manifest (.autograder/manifest.json): report protected files the "
    "submission changed, in results.json and the job summary."
)
def grade(**options) -> None:
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
    with shared.warm_workers():
        from autograder.commands import grade as command

        code = command.main(**options)
    raise SystemExit(code)


@cli.command(short_help=SHORT_HELP["release"])
@shared.out_folder_option("A new (or empty) folder for the learner repository.")
@shared.course_option(
    "The course.toml to release (default: the nearest one above the current folder)."
)
@shared.pass_rule_option(
    "When the learner's grade job passes: 'all' or 'min_score:N' "
    "(default: [ci] pass_rule in course.toml, else 'all')."
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
def release(**options) -> None:
    """Build the learner repository in OUT: stubs, the autograder package, the visible tests,
    course.toml, pyproject.toml, a README, .github/workflows/grade.yml and a manifest of
    protected files. Never the references or the hidden tests. Same input, same bytes.

    Exit status: 0 written, 2 not written (the reason is printed).
    """
    from autograder.commands import release as command

    raise SystemExit(command.main(**options))
