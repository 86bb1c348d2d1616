"""`autograder --help` at 80 columns: every command's line is whole, not cut with '...'."""

from __future__ import annotations

from click.testing import CliRunner

from autograder.cli import SHORT_HELP, cli


def test_every_command_description_is_whole_at_80_columns() -> None:
    done = CliRunner().invoke(cli, ["--help"], terminal_width=80)
    assert done.exit_code == 0, done.output
    commands = done.output.split("Commands:\n", 1)[1].splitlines()
    assert sorted(SHORT_HELP) == sorted(cli.commands)
    for name, text in SHORT_HELP.items():
        assert f"  {name.ljust(11)}  {text}" in commands
    assert not any(line.endswith("...") for line in commands)
    assert max(len(line) for line in done.output.splitlines()) <= 80
