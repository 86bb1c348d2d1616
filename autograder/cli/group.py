"""The `autograder` command group, and how a command line ends.

The commands are defined in this package's *_commands.py modules, each a thin click layer over
`autograder.commands.<name>.main(*, ...)`; importing the package registers them.
"""

from __future__ import annotations

import gc

import click

from autograder import __version__
from autograder.atomic_files import cannot_write


class _Commands(click.Group):
    """The command group. Run from a command line (click reads sys.argv), the process ends
    as ``sys.exit`` ends it, with its heap frozen (``_leave``). Called with arguments (click's
    CliRunner, a test) it returns or raises as usual."""

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
    "publish": "Send a gradebook's grades to GitHub: statuses and PR comments.",
    "release": "Build the learner repository: stubs, visible graders, CI.",
    "similarity": "Flag pairs of learners whose code is unusually alike.",
}
INTERRUPTED_EARLY = "Interrupted before anything was graded; run the same command again."


def _leave(code: object) -> None:
    """Exit with click's status, the heap frozen first (``gc.freeze``): the interpreter's
    teardown then leaves torch's objects to the operating system instead of collecting them,
    which took a single `grade` 0.6 to 0.7 s after its reports were written."""
    gc.freeze()
    raise SystemExit(code)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="autograder")
def cli() -> None:
    """Grade Transformers 101 style assignments: run the course's graders against learner
    code in an isolated worker process and write reports.

    Run `autograder COMMAND --help` for what each command does.
    """
