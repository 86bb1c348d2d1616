"""The run's length in results.json, a channel out of the hidden tests (hostile finding).

softmax slept, in the one hidden test whose input has shape (3, 4, 5, 2), as many seconds as
that input's first entry said (modulo 8); results.json, which a learner gets, told the run's
duration to the millisecond: 11.272 s at `--seed 0`, 16.123 s at `--seed 1`, at full marks.
results.json now tells the duration only of a run in which no hidden test ran; the gradebook
keeps every run's time for the instructor.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from autograder.results import TestResult, build_grade
from tests.hostile.static_check_sources import COURSE

from ..examples.edited import ROOT, edited_reference


def grade(*visibilities: str):
    tests = [
        TestResult(f"t{n}", f"t::t{n}", "softmax", status="passed", visibility=v)
        for n, v in enumerate(visibilities)
    ]
    return build_grade(
        COURSE, tests, submission="s", seed=0, hidden_included=True, duration=11.272
    ).to_gradescope()


def test_a_run_with_a_hidden_test_tells_no_duration():
    assert "duration" not in grade("visible", "hidden")["extra_data"]


def test_a_run_of_visible_tests_alone_tells_its_duration():
    assert grade("visible", "visible")["extra_data"]["duration"] == 11.272


SLEEPER = """    x = np.asarray(x)
    if x.shape == (3, 4, 5, 2):  # a hidden test's input: no visible test has this shape
        import time

        time.sleep(float(abs(x.flat[0])) % 8)  # its first entry, read out as run time
"""


def test_a_graded_run_that_slept_in_a_hidden_test_tells_no_duration(tmp_path: Path):
    learner = edited_reference(tmp_path / "sleeper", {"softmax.py": [(SLEEPER[:21], SLEEPER)]})
    out = tmp_path / "grades"
    subprocess.run(  # every test passes: the exit status is 0
        [sys.executable, "-m", "autograder", "grade", str(learner), "--out", str(out)]
        + ["--course", str(ROOT / "course.toml"), "--quiet", "--component", "softmax"],
        cwd=ROOT,
        check=True,
        timeout=600,
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 10.0 and results["extra_data"]["hidden_included"] is True
    assert "duration" not in results["extra_data"]
