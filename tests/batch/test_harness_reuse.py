"""One harness child grades several learners in turn (batch/session_process.py): each learner's
reports are exactly those of the same learner graded alone, whatever was graded before them in
that child (failures, a forbidden call, another learner's full marks); a child killed while it
grades a learner costs that learner's grade only."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from autograder.batch.learner_job import PROCESS_DIED
from autograder.gradebook import store
from tests.batch.conftest import ROOT, run_cli, start_slow_class, wait_until_recorded
from tests.processes import children, session_pid

CLASS = ROOT / "examples" / "submissions"
# Graded in this order by one child (roster ids sort so): every test failing, then full
# marks, a forbidden API, one planted mistake, and full marks again after all of them.
IN_TURN = {
    "1-ben": "ben",
    "2-amara": "amara",
    "3-lena": "lena",
    "4-dara": "dara",
    "5-amara": "amara",
}
TIMING = re.compile(
    r'(time|timestamp)="[^"]*"|"(duration|started_at)": [^,}]*|started \S+\.$|in [0-9.]+s$'
    r"|^=+ [^=]* in [0-9.]+s =+$",  # pytest's last line, centred: its width follows the time
    re.MULTILINE,
)


def _grade(roster: Path, out: Path, tmp_path: Path) -> None:
    """grade-class with one job: every learner graded (exit status 0)."""
    course = str(ROOT / "course.toml")
    done = run_cli(
        "grade-class", str(roster), "--out", str(out), "--course", course, "--timeout", "2",
        "--jobs", "1", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def _reports(folder: Path, roster: Path) -> dict[str, str]:
    """The learner's reports, timings and the roster's folder (grader.log names it) blanked."""
    return {
        name: TIMING.sub("<time>", (folder / name).read_text(encoding="utf-8")).replace(
            str(roster), "<roster>"
        )
        for name in ("results.json", "summary.md", "junit.xml", "grader.log")
    }


def test_each_learner_of_a_reused_child_is_graded_as_if_alone(tmp_path: Path) -> None:
    together = tmp_path / "together"
    for learner, example in IN_TURN.items():
        shutil.copytree(CLASS / example, together / learner)
    _grade(together, tmp_path / "out", tmp_path)
    totals = {
        learner: round(
            json.loads((tmp_path / "out" / learner / "results.json").read_text())["score"], 2
        )
        for learner in IN_TURN
    }
    assert totals == {
        "1-ben": 0.0,
        "2-amara": 100.0,
        "3-lena": 75.0,
        "4-dara": 88.84,
        "5-amara": 100.0,
    }
    for learner in IN_TURN:
        alone = tmp_path / "alone" / learner
        shutil.copytree(together / learner, alone / learner)
        _grade(alone, tmp_path / "alone-out" / learner, tmp_path)
        assert _reports(tmp_path / "out" / learner, together) == _reports(
            tmp_path / "alone-out" / learner / learner, alone
        ), learner


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_harness_child_killed_mid_learner_costs_only_that_learner(tmp_path: Path) -> None:
    learners = ["a-first", "b-killed", "c-after", "d-after"]
    process, out = start_slow_class(
        tmp_path, learners, ["b-killed"], jobs=1, stderr=subprocess.PIPE, text=True
    )
    wait_until_recorded(process, out, "a-first")  # its child now grades b-killed, slowly
    session = session_pid(process.pid)
    assert session is not None, "no session process found"
    harnesses = children(session)
    assert len(harnesses) == 1, harnesses  # one job: one harness child, which graded a-first
    os.kill(harnesses[0], signal.SIGKILL)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1, err  # one row carries an error
    rows = {r.learner: r for r in store.read_records(out)}
    assert rows["b-killed"].error == PROCESS_DIED.format(learner="b-killed", code=-9)
    for learner in ("a-first", "c-after", "d-after"):  # a new child took over
        assert not rows[learner].error and rows[learner].total == rows[learner].max_score
