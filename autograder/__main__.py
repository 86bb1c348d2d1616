"""`python -m autograder` is the `autograder` command."""

from autograder.cli import cli

cli(prog_name="autograder")
