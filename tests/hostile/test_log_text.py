"""Roster and learner text never becomes a CI workflow command, a second log line or a terminal
escape, wherever the harness prints it.

GitHub's runner reads a line that starts with `::` (after blanks) as a command. A roster path
with a line break, a file name of a learner's commit, a link target: each reached the log of a
batch run on CI. Values are escaped where they enter (roster rows, exported names, link
targets), and every line the command writes to a log is guarded (github/command_guard.py).
"""

from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest

from autograder.github.command_guard import CommandSafe, commands_stream
from autograder.gradebook import roster
from tests.batch.conftest import BEFORE, TOY_COURSE, commit_all, init_repo, run_cli

COMMAND_LINE = re.compile(r"^\s*(::|##\[|##vso\[)", re.MULTILINE | re.IGNORECASE)


def guarded(*chunks: str, flush: bool = False) -> str:
    raw = io.StringIO()
    stream = CommandSafe(raw)
    for chunk in chunks:
        stream.write(chunk)
        if flush:
            stream.flush()
    stream.flush()
    return raw.getvalue()


@pytest.mark.parametrize(
    "chunks, flush, expected",
    [
        (("ok\n::error::forged\nok\n",), False, "ok\n> ::error::forged\nok\n"),
        ((":", ":error::split across writes\n"), True, "> ::error::split across writes\n"),
        (("  ", "::add-mask::x\n"), True, "  > ::add-mask::x\n"),
        (("a\r::set-output name=score::100\n",), False, "a\r> ::set-output name=score::100\n"),
        (("##[error]old\n##vso[task.x]y\n",), False, "> ##[error]old\n> ##vso[task.x]y\n"),
        (
            ("# a heading\n: a colon\n| a table |\n",),
            False,
            "# a heading\n: a colon\n| a table |\n",
        ),
    ],
    ids=["line", "split-write", "after-blanks", "carriage-return", "old-forms", "harmless"],
)
def test_no_line_written_through_the_guard_is_a_workflow_command(chunks, flush, expected):
    assert guarded(*chunks, flush=flush) == expected


def test_the_publisher_writes_real_commands_under_the_guard():
    raw = io.StringIO()
    assert commands_stream(CommandSafe(raw)) is raw
    assert commands_stream(raw) is raw


def test_a_roster_path_with_a_line_break_is_that_rows_error_and_not_repeated(tmp_path):
    csv = tmp_path / "roster.csv"
    csv.write_text('learner,repo\nkofi,"x\n::error::forged"\n', encoding="utf-8")
    [kofi] = roster.read_roster(csv)
    assert kofi.repo is None and kofi.error == roster.UNPRINTABLE.format(learner="kofi")


def test_a_batch_log_holds_no_command_from_roster_or_commit_names(tmp_path):
    """The real command line, its output a pipe as on CI: a roster row whose path holds a line
    break, and a commit whose only entry is a link named with one."""
    base = tmp_path / "class"
    linked = base / "linked"
    init_repo(linked)
    (linked / "toypkg\n::error::from a file name").symlink_to("nowhere")
    commit_all(linked, "a link with a line break in its name", BEFORE)
    csv = tmp_path / "roster.csv"
    csv.write_text(
        f'learner,repo\nlinked,{linked}\nbroken,"nowhere\n::error::from the roster"\n'
        "markup,nowhere/<img src=x onerror=alert(1)> **bold** [x](http://e.vil)\n",
        encoding="utf-8",
    )
    done = run_cli("grade-class", str(csv), "--out", str(tmp_path / "out"), "--course",
                   str(TOY_COURSE), "--jobs", "1", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    log = done.stdout + done.stderr
    assert not COMMAND_LINE.search(log), log
    assert "toypkg\\n::error::from a file name" in log  # escaped, on one line
    assert roster.UNPRINTABLE.format(learner="broken") in log
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "<img" not in markdown and "](http://e.vil)" not in markdown


def test_the_guard_is_on_when_output_is_no_terminal():
    probe = (
        "import sys; from autograder.github.command_guard import no_workflow_commands as g; g(); "
        "print('::error::x'); print('::warning::y', file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert (done.stdout, done.stderr) == ("> ::error::x\n", "> ::warning::y\n")
