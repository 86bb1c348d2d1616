"""A learner's grader.log holds no warning about the framework itself (pytest warned in every
log that it could not assertion-rewrite autograder.pytest_plugin, imported before it started)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TOY = Path(__file__).parent / "toy_course"


def grade_log(submission: Path, tmp_path: Path, out: Path, code: int, **env: str) -> str:
    """The grader.log of `autograder grade SUBMISSION` on the toy course (exit status `code`),
    run with these environment variables added."""
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(submission)]
        + ["--course", str(TOY / "course.toml"), "--out", str(out), "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(tmp_path), **env},
    )
    assert done.returncode == code, done.stderr
    return (out / "grader.log").read_text()


def test_a_grade_log_has_no_warnings_summary(tmp_path: Path) -> None:
    log = grade_log(TOY / "solution", tmp_path, tmp_path / "out", 0)
    assert "passed" in log.splitlines()[-1]
    assert "warnings summary" not in log and "Warning" not in log


def test_a_grade_log_is_the_same_whatever_the_terminal_or_ci(tmp_path: Path) -> None:
    """pytest fitted its console to the terminal (or COLUMNS) and cut the short summary's
    messages to that width except on a CI machine: the same learner's grader.log differed
    between their machine, their CI and the instructor's batch."""
    logs = []
    for columns, ci in (("60", ""), ("150", "true")):
        out = tmp_path / f"out-{columns}"
        mistake = TOY / "submissions" / "mistake"  # graded, some tests failed: exit status 1
        logs.append(grade_log(mistake, tmp_path, out, 1, COLUMNS=columns, CI=ci))
    # The duration and the '=' padding pytest centres it with (one more digit, one '=' less).
    final = re.compile(r"^=+ (.*) in [0-9.]+s(?: \([0-9:]+\))? =+$", re.MULTILINE)
    timing = re.compile(r"in [0-9.]+s")
    same = [timing.sub("", final.sub(r"\1", log)) for log in logs]
    assert same[0] == same[1]
    assert {len(line) for line in logs[0].splitlines() if line.startswith("=")} == {80}
    failed = [line for line in logs[0].splitlines() if line.startswith("FAILED ")]
    assert failed and all(" - " in line and len(line) > 80 for line in failed)


FORGING_SCALE = """def scale(x, factor):
    raise ValueError("line one\\nFAILED tests/graders/visible/test_fake.py::forged - PASSED")
"""


def test_learner_newlines_cannot_forge_lines_of_the_short_summary(tmp_path: Path) -> None:
    """The short summary shows a visible failure's whole message (-vv): on one line, so that a
    learner's exception text cannot add a line of its own there."""
    submission = tmp_path / "forger"
    shutil.copytree(TOY / "solution", submission)
    (submission / "toypkg" / "scale.py").write_text(FORGING_SCALE)
    log = grade_log(submission, tmp_path, tmp_path / "out", 1)
    summary = log.split("short test summary info", 1)[1].splitlines()[1:-1]
    assert len(summary) == 2  # the visible and the hidden scale test
    assert all(line.startswith("FAILED tests/framework/toy_course/") for line in summary)
    assert "in scale: line one FAILED tests/graders/visible/test_fake.py::forged" in summary[0]


def test_a_grade_log_shows_no_output_printed_during_a_hidden_test(tmp_path: Path) -> None:
    """The toy mistake prints in scale(), which a visible and a hidden test call and fail: what
    it printed during the hidden one could hold the hidden inputs, and grader.log may reach the
    learner (their CI uploads it)."""
    log = grade_log(TOY / "submissions" / "mistake", tmp_path, tmp_path / "out", 1)
    failures = log.split(" FAILURES ", 1)[1].split("short test summary info", 1)[0]
    parts = re.split(r"^_+ (\S+) _+$", failures, flags=re.MULTILINE)  # [before, name, body, ...]
    pairs = zip(parts[1::2], parts[2::2], strict=True)
    printed = {name: "Your code printed" in body for name, body in pairs}
    assert printed == {"test_scale_values": True, "test_scale_batch": False}
