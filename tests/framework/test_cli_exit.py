"""How the `autograder` command ends (cli/): from a command line with click's status and its
heap frozen; with arguments (CliRunner) as usual; its exit handlers run and its sentences are
printed either way."""

from __future__ import annotations

import errno
import gc
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.atomic_files import CANNOT_WRITE
from autograder.cli import group as cli_module
from autograder.commands import grade as command
from autograder.config import SUBMISSION_MISSING

TOY = Path(__file__).parent / "toy_course"


@pytest.fixture
def frozen():
    """The heap's frozen objects are unfrozen again after the test."""
    yield
    gc.unfreeze()


@pytest.mark.parametrize("code", [None, 0, 1, 2, 130, "The course file is missing."])
def test_the_command_line_exits_with_clicks_code_and_a_frozen_heap(frozen, code):
    """The interpreter's teardown collects no frozen object: torch's are left to the OS."""
    gc.unfreeze()
    with pytest.raises(SystemExit) as stop:
        cli_module._leave(code)
    assert stop.value.code == code
    assert gc.get_freeze_count() > 0


def test_with_arguments_the_command_returns_to_its_caller(frozen):
    gc.unfreeze()
    result = CliRunner().invoke(cli_module.cli, ["--version"])
    assert result.exit_code == 0 and "autograder" in result.output
    assert gc.get_freeze_count() == 0  # _leave was never called: this test process goes on


def run_command(*args: str, temp: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    temp.mkdir(parents=True)
    return subprocess.run(
        [sys.executable, "-m", "autograder", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(temp), "COLUMNS": "120"},
    )


def test_a_real_command_line_keeps_its_status_its_sentence_and_its_clean_up():
    """`python -m autograder grade` of a missing folder: status 2, the sentence on stderr, and
    the zygote's folder removed before the process ended."""
    with tempfile.TemporaryDirectory() as short:  # the zygote's socket path must fit
        temp, missing = Path(short) / "tmp", Path(short) / "nobody"
        completed = run_command(
            "grade", str(missing), "--course", str(TOY / "course.toml"), temp=temp
        )
        assert completed.returncode == 2
        reason = SUBMISSION_MISSING.format(path=missing)
        assert completed.stderr == command.NOT_GRADED.format(name="nobody", reason=reason) + "\n"
        assert list(temp.iterdir()) == []


def test_a_temp_folder_too_deep_for_the_zygotes_socket_still_grades(tmp_path):
    """A Unix socket's path holds 107 bytes: without a zygote the workers start fresh. The
    table reaches stdout and the workers' private copies are removed before the process ends."""
    temp = tmp_path / ("deep" * 30)
    out = tmp_path / "out"
    completed = run_command(
        "grade", "solution", "--visible-only", "--out", str(out), temp=temp, cwd=TOY
    )
    assert completed.returncode == 0, completed.stderr
    assert "15.00 / 15.00" in completed.stdout
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["score"] == 15.0
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EROFS])
def test_a_full_or_read_only_disk_ends_with_a_sentence_not_a_traceback(monkeypatch, code):
    """A report that cannot be written because of the disk: one sentence naming the file and
    the reason, status 2; any other OSError is a bug and keeps its traceback."""
    path = "/grades/amara/results.json"
    monkeypatch.setenv("AUTOGRADER_NO_ZYGOTE", "1")  # main is replaced: no worker is needed

    def full_disk(**kwargs):
        raise OSError(code, os.strerror(code), path)

    monkeypatch.setattr(command, "main", full_disk)
    result = CliRunner().invoke(cli_module.cli, ["grade", str(TOY / "solution")])
    assert result.exit_code == 2
    assert result.output == CANNOT_WRITE.format(where=f" {path}", why=os.strerror(code)) + "\n"
    assert "Traceback" not in result.output

    def other(**kwargs):
        raise OSError(errno.EIO, "Input/output error", path)

    monkeypatch.setattr(command, "main", other)
    broken = CliRunner().invoke(cli_module.cli, ["grade", str(TOY / "solution")])
    assert isinstance(broken.exception, OSError) and broken.exception.errno == errno.EIO


def test_an_output_folder_inside_a_file_ends_with_a_sentence(tmp_path):
    """H42: `grade --out FILE/x` ended with a NotADirectoryError traceback."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder", encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(TOY / "solution")]
        + ["--course", str(TOY / "course.toml"), "--out", str(afile / "x"), "-q"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert completed.stderr.startswith(f"Could not write {afile / 'x'}")
    assert "Choose an output folder you can write in (not one inside a file)" in completed.stderr
