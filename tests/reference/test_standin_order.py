"""Within one stage, every test of a part runs before any test that hands learner code its stand-in.

Learner code can keep a stand-in it is handed and call it in a later test of the same worker.
The harness gives the hidden tests a fresh worker when the visible ones handed a stand-in
(runtime/harness/standin_custody.py); within one stage the graders' order must do the rest
(component by component in course.toml's order, pytest_plugin/collection.py). Checked on this
course's graders as they run on a correct submission: which test hands which stand-in is read
from the run itself.

What each stand-in kind stands in for: the component of its name; `encoder_layer` is the encoder
component's EncoderLayer (its tests are named `test_layer_...`), handed by the Encoder's tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.grading.graders_session import pytest_args

ROOT = Path(__file__).resolve().parents[2]
SUBMISSION = ROOT / "examples" / "submissions" / "amara"
#: stand-in kind -> (component, prefix of the names of the tests that grade what it stands for)
STANDS_FOR = {
    "softmax": ("softmax", "test_"),
    "multi_head_attention": ("multi_head_attention", "test_"),
    "feed_forward": ("feed_forward", "test_"),
    "add_norm": ("add_norm", "test_"),
    "encoder_layer": ("encoder", "test_layer"),
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> list[dict]:
    """Each grader test as it ran on a correct submission, in order: {nodeid, component,
    visibility, kinds} (tests/reference/standin_hand_log.py records the stand-ins it handed)."""
    config = load_course(ROOT / "course.toml")
    folders = [config.visible_tests, config.hidden_tests]
    args = pytest_args(config, folders, submission=SUBMISSION, seed=0, test_timeout=None)
    log = tmp_path_factory.mktemp("order") / "handed.jsonl"
    command = [sys.executable, "-m", "pytest", *args, "-p", "tests.reference.standin_hand_log"]
    env = {**os.environ, "STANDIN_HAND_LOG": str(log)}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [json.loads(line) for line in log.read_text().splitlines()]


def grades(test: dict, kind: str) -> bool:
    component, prefix = STANDS_FOR[kind]
    name = test["nodeid"].rsplit("::", 1)[-1]
    return test["component"] == component and name.startswith(prefix)


def test_no_test_of_a_part_runs_after_its_standin_was_handed_in_the_same_stage(ran):
    tests = ran
    handed = {kind for test in tests for kind in test["kinds"]}
    assert handed == set(STANDS_FOR)  # every kind is handed somewhere: the check is not empty
    late = []
    for index, test in enumerate(tests):
        for kind in test["kinds"]:
            late += [
                f"{later['nodeid']} runs after {test['nodeid']} handed {kind}"
                for later in tests[index + 1 :]
                if later["visibility"] == test["visibility"] and grades(later, kind)
            ]
    assert late == []


def test_the_hidden_tests_run_after_every_visible_one(ran):
    stages = [test["visibility"] for test in ran]
    assert stages == sorted(stages, key=["visible", "hidden"].index)
    assert set(stages) == {"visible", "hidden"}
