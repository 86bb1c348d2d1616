"""`autograder grade ... | head -1`: standard output whose reader has gone changes neither the
exit status nor how much is graded (click used to exit 1 at the first broken pipe); nor does
starting with no standard output at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TOY = Path(__file__).parent / "toy_course"


def _grade_into_closed_pipe(tmp_path: Path, *submissions: str) -> subprocess.CompletedProcess:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        return subprocess.run(
            [sys.executable, "-m", "autograder", "grade", *submissions]
            + ["--course", str(TOY / "course.toml"), "--out", str(tmp_path / "out")],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )
    finally:
        os.close(write)


def test_a_passing_grade_exits_0_into_a_closed_pipe(tmp_path: Path) -> None:
    done = _grade_into_closed_pipe(tmp_path, str(TOY / "solution"))
    assert (done.returncode, done.stderr) == (0, "")


def test_every_submission_is_graded_into_a_closed_pipe(tmp_path: Path) -> None:
    done = _grade_into_closed_pipe(
        tmp_path, str(TOY / "solution"), str(TOY / "submissions" / "mistake")
    )
    assert (done.returncode, done.stderr) == (1, "")  # the mistake fails a test
    assert (tmp_path / "out" / "mistake" / "results.json").is_file()


def test_a_grade_started_without_stdout_exits_0(tmp_path: Path) -> None:
    """`autograder grade ... >&-`: Python starts with sys.stdout None; the exit flushed it."""
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(TOY / "solution")]
        + ["--course", str(TOY / "course.toml"), "--out", str(tmp_path / "out")],
        preexec_fn=lambda: os.close(1),
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert (tmp_path / "out" / "results.json").is_file()
