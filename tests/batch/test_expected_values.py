"""grade-class computes each expected value once per batch (autograder/expected.py): the first
learner's child writes what its graders computed to DIR/.expected, the session process reads it
before the next fork, and later learners reuse it; the gradebook is the same without the store."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.expected import DISABLE
from tests.batch.conftest import ROOT, TOY, gradebook_without_timing, read_gradebook, run_cli

CLASS = ROOT / "examples" / "submissions"

# A toy grader with one pure expected value and one that draws from torch's global generator;
# each appends a line to computed.log in the course folder when it really computes.
COUNTING_TEST = '''
from pathlib import Path

import pytest
import torch

from autograder.expected import expected_value
from autograder.feedback import expect_close

LOG = Path(__file__).resolve().parents[3] / "computed.log"


def computed(name):
    with LOG.open("a", encoding="utf-8") as stream:
        stream.write(name + "\\n")


@expected_value
def tripled(x):
    computed("tripled")
    return {"x3": 3.0 * x}


@expected_value
def with_noise(x):
    computed("with_noise")
    return x + 0.0 * torch.rand(x.shape, dtype=torch.float64).numpy()


@pytest.mark.scale
def test_scale_by_three_against_a_stored_value(learner, rng):
    """scale(x, 3.0) equals 3 x, computed once per batch"""
    x = rng.normal(size=(2, 3))
    got = learner.module("scale").scale(x, 3.0)
    expect_close(got, tripled(x)["x3"], what="scale(x, 3.0)", atol=1e-12)
    expect_close(got, 3.0 * with_noise(x), what="scale(x, 3.0)", atol=1e-12)
'''


def test_the_first_learner_computes_and_the_later_ones_reuse(tmp_path: Path) -> None:
    course = tmp_path / "course"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__", "submissions"))
    (course / "tests" / "graders" / "visible" / "test_toy_expected.py").write_text(COUNTING_TEST)
    roster = tmp_path / "roster"
    roster.mkdir()
    learners = ("ada", "bo", "cy")
    for name in learners:
        (roster / name).symlink_to(TOY / "solution")  # a plain folder: graded as it is
    out = tmp_path / "out"
    done = run_cli(
        "grade-class", str(roster), "--out", str(out), "--course", str(course / "course.toml"),
        "--jobs", "1", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = (course / "computed.log").read_text(encoding="utf-8").splitlines()
    # The pure value once for the batch; the impure one by every learner, never stored.
    assert sorted(lines) == ["tripled"] + ["with_noise"] * len(learners)
    rows = {row["learner"]: row for row in read_gradebook(out / "gradebook.csv")}
    assert list(rows) == list(learners)
    for name in learners:
        results = json.loads((out / name / "results.json").read_text(encoding="utf-8"))
        test = next(t for t in results["tests"] if "computed once per batch" in t["name"])
        assert test["status"] == "passed", test
        log = (out / name / "grader.log").read_text(encoding="utf-8")
        assert "ExpectedValueImpure" in log and "with_noise drew from the global" in log
    assert rows["ada"]["total"] == rows["cy"]["total"] == "15.00"
    assert not (out / ".expected").exists()  # the store goes with the batch


def _grade_class(roster: Path, out: Path, *, store: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != DISABLE}
    if not store:
        env[DISABLE] = "1"
    return subprocess.run(
        [sys.executable, "-m", "autograder", "grade-class", str(roster), "--out", str(out)]
        + ["--course", str(ROOT / "course.toml"), "--timeout", "2", "--jobs", "1", "-q"],
        cwd=roster.parent,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def test_the_example_class_grades_the_same_with_and_without_the_store(tmp_path: Path) -> None:
    roster = tmp_path / "roster"
    roster.mkdir()
    # correct, and mistakes in attention, multi-head attention and the encoder
    learners = ("amara", "dara", "elif", "farah", "hana", "ivan")
    for name in learners:
        (roster / name).symlink_to(CLASS / name)
    graded = {}
    for store in (True, False):
        out = tmp_path / f"out_{store}"
        done = _grade_class(roster, out, store=store)
        assert done.returncode == 0, done.stderr  # every learner graded (some lost points)
        graded[store] = out
    assert gradebook_without_timing(graded[True] / "gradebook.csv") == gradebook_without_timing(
        graded[False] / "gradebook.csv"
    )
    for name in learners:
        tests = {}
        for store, out in graded.items():
            document = json.loads((out / name / "results.json").read_text(encoding="utf-8"))
            tests[store] = [
                (t["name"], t["status"], t["score"], t["output"]) for t in document["tests"]
            ]
        assert tests[True] == tests[False], name
        log = (graded[True] / name / "grader.log").read_text(encoding="utf-8")
        assert "ExpectedValueImpure" not in log  # every course expected value can be stored
    rows = {row["learner"]: row for row in read_gradebook(graded[True] / "gradebook.csv")}
    assert rows["amara"]["total"] == "100.00"
    assert float(rows["farah"]["multi_head_attention"]) < 25.0
