"""The documentation site says what the commands are: every command's options and exit codes
in its page's tables are the ones its click command and `--help` have, and the pages CI
builds are the ones in mkdocs.yml's navigation.

A page documents a command with a marker line before each table:
`<!-- options: NAME -->` (first column: the option's flags, or its argument's name, in code) and
`<!-- exit-codes: NAME -->` (first column: the status). Building the site itself
(`mkdocs build --strict`: links, anchors, included files) is CI's job, not this test's.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
import yaml

from autograder.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!-- (options|exit-codes): ([\w-]+) -->$")
CODE = re.compile(r"`([^`]+)`")
NO_TABLE = (
    "{page} has the marker for the {kind} of `autograder {name}` but no Markdown table right "
    "after it."
)
MISSING = (
    "No page of docs/ documents the {kind} of `autograder {name}`: add a table after a line "
    "`<!-- {kind}: {name} -->` to the page of its journey (see the table in "
    "docs/instructor/grade-class.md for the form)."
)


def _tables() -> dict[tuple[str, str], tuple[Path, list[list[str]]]]:
    """{(kind, command): (page, rows of the table after its marker, header and rule left out)}."""
    found: dict[tuple[str, str], tuple[Path, list[list[str]]]] = {}
    for page in sorted(DOCS.rglob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            match = MARKER.match(line.strip())
            if not match:
                continue
            key = (match[1], match[2])
            assert key not in found, f"{page} documents the {key[0]} of {key[1]} a second time"
            table = []
            for row in lines[number + 1 :]:
                if not row.startswith("|"):
                    break
                table.append([cell.strip() for cell in row.strip().strip("|").split("|")])
            assert len(table) > 2, NO_TABLE.format(page=page, kind=key[0], name=key[1])
            found[key] = (page, table[2:])
    return found


def _commands() -> dict[str, click.Command]:
    with click.Context(cli) as context:
        return {name: cli.get_command(context, name) for name in cli.list_commands(context)}


def _documented_flags(rows: list[list[str]]) -> set[str]:
    """`-j`, `--jobs N` -> {"-j", "--jobs"}; `ROSTER` -> {"ROSTER"}."""
    return {span.split()[0] for row in rows for span in CODE.findall(row[0])}


def _click_flags(command: click.Command) -> set[str]:
    flags: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Argument):
            flags.add(param.human_readable_name)
        elif "--help" not in param.opts:
            flags.update(param.opts, param.secondary_opts)
    return flags


def _help_exit_codes(command: click.Command) -> set[str]:
    """The statuses of the help's "Exit status: 0 ..., 1 ..., 130 interrupted." sentence."""
    text = " ".join((command.help or "").split())
    match = re.search(r"Exit status: (.*?\.)(?:\s|$)", text)
    assert match, f"`autograder {command.name} --help` has no 'Exit status: ...' sentence"
    return set(re.findall(r"(?:^|, )(\d+) ", match[1]))


COMMANDS = sorted(_commands())


def test_the_site_documents_the_commands_it_is_checked_against() -> None:
    assert {"grade", "grade-class", "merge", "check", "release"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_each_commands_option_table_lists_exactly_its_options(name: str) -> None:
    tables = _tables()
    assert ("options", name) in tables, MISSING.format(kind="options", name=name)
    page, rows = tables["options", name]
    documented, real = _documented_flags(rows), _click_flags(_commands()[name])
    assert documented == real, (
        f"{page.relative_to(ROOT)}: the options table of `autograder {name}` lists "
        f"{sorted(documented - real)} that the command does not have and misses "
        f"{sorted(real - documented)} that it has."
    )


@pytest.mark.parametrize("name", COMMANDS)
def test_each_commands_exit_codes_are_those_its_help_gives(name: str) -> None:
    tables = _tables()
    assert ("exit-codes", name) in tables, MISSING.format(kind="exit-codes", name=name)
    page, rows = tables["exit-codes", name]
    documented = {row[0].strip("`") for row in rows}
    assert documented == _help_exit_codes(_commands()[name]), (
        f"{page.relative_to(ROOT)}: the exit statuses of `autograder {name}` are "
        f"{sorted(documented)}, its --help says {sorted(_help_exit_codes(_commands()[name]))}."
    )


def test_the_marker_parser_reads_flags_arguments_and_exit_codes() -> None:
    rows = [["`-j`, `--jobs N`", "one per core"], ["`ROSTER`", "required"]]
    assert _documented_flags(rows) == {"-j", "--jobs", "ROSTER"}

    @click.command(help="Do it.\n\nExit status: 0 done, 2 not done (a reason), 130 stopped.")
    @click.argument("things", nargs=-1)
    @click.option("-q", "--quiet", is_flag=True)
    def demo(things, quiet):  # pragma: no cover - never invoked
        pass

    assert _click_flags(demo) == {"THINGS", "-q", "--quiet"}
    assert _help_exit_codes(demo) == {"0", "2", "130"}


def _nav_pages(entries: list) -> set[str]:
    pages: set[str] = set()
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages.update(_nav_pages(value) if isinstance(value, list) else {value})
    return pages


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = _nav_pages(config["nav"])
    on_disk = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert in_nav == on_disk, (
        f"pages not in mkdocs.yml's nav: {sorted(on_disk - in_nav)}; "
        f"nav entries with no page: {sorted(in_nav - on_disk)}"
    )


#: Files kept where GitHub shows them, which site pages include (pymdownx.snippets).
INCLUDED = ["CHANGELOG.md", "SECURITY.md", "benchmarks/README.md"]
RELATIVE_LINK = re.compile(r"\]\((?!https?://|#)([^)]+)\)")


@pytest.mark.parametrize("name", INCLUDED)
def test_files_the_site_includes_have_no_relative_links(name: str) -> None:
    """A relative link in an included file is read from the including page's folder, where it
    points nowhere (mkdocs build --strict fails): name files in code instead."""
    links = RELATIVE_LINK.findall((ROOT / name).read_text(encoding="utf-8"))
    assert not links, f"{name} links to {links}: write them as `code`, not as links."
    assert RELATIVE_LINK.findall("see [publish](docs/instructor/publish.md#x) and [a](#b)") == [
        "docs/instructor/publish.md#x"
    ]
