"""`autograder check` run in this process on the toy course, for the check's tests."""

from __future__ import annotations

import io
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from autograder.commands import check

TOY = Path(__file__).parent / "toy_course"


def run_main(**options) -> tuple[int, str, str]:
    """check.main with stdout and stderr captured, printed 80 columns wide."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, redirect_stdout(out), redirect_stderr(err):
        patch.setenv("COLUMNS", "80")
        code = check.main(**{"course": TOY / "course.toml", "jobs": 2, "quiet": True, **options})
    return code, out.getvalue(), err.getvalue()


def copied_toy(folder: Path) -> Path:
    """A copy of the toy course in folder/toy (no submissions, no caches), to be edited."""
    course = folder / "toy"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__", "submissions"))
    return course
