"""A learner's grader.log holds no warning about the framework itself (pytest warned in every
log that it could not assertion-rewrite autograder.pytest_plugin, imported before it started)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TOY = Path(__file__).parent / "toy_course"


def test_a_grade_log_has_no_warnings_summary(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(TOY / "solution")]
        + ["--course", str(TOY / "course.toml"), "--out", str(tmp_path / "out"), "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "out" / "grader.log").read_text()
    assert "passed" in log.splitlines()[-1]
    assert "warnings summary" not in log and "Warning" not in log
