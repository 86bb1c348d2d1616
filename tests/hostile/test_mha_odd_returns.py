"""Multi-head attention submissions that return odd things, graded end to end: the learner gets
a sentence in every failing test and the graders never fail themselves.

Found by the H24 hostile pass: a forward that returns only the output (a common slip) or a
string made the permutation tests unpack or index it in the grader (two grader errors), and a
constructor whose ``__new__`` returns a number made twenty.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "solutions" / "t101"

FORWARD = """
_forward = MultiHeadAttention.forward


def _odd(self, *args, **kwargs):
    output, weights = _forward(self, *args, **kwargs)
    return {value}


MultiHeadAttention.forward = _odd
"""

SUBMISSIONS = {
    "output_only": (FORWARD.format(value="output"), "expected a tuple"),
    "output_str": (FORWARD.format(value="'x' * 100, weights"), "returned a str"),
    "new_gives_int": (
        "MultiHeadAttention.__new__ = lambda cls, *a, **k: 42\n",
        "MultiHeadAttention(...) gave an int, not an object of its class",
    ),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    base = tmp_path_factory.mktemp("odd")
    folders = []
    for name, (code, _) in SUBMISSIONS.items():
        package = base / name / "assignments" / "t101"
        shutil.copytree(REFERENCE, package)
        module = package / "multi_head_attention.py"
        module.write_text(module.read_text() + "\n" + code)
        folders.append(str(base / name))
    out = base / "out"
    command = [sys.executable, "-m", "autograder", "grade", *folders, "--out", str(out), "-q"]
    command += ["--component", "multi_head_attention"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    return {name: json.loads((out / name / "results.json").read_text()) for name in SUBMISSIONS}


@pytest.mark.hostile
@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_every_failing_test_says_what_the_learner_returned(graded, name):
    tests = [t for t in graded[name]["tests"] if "multi_head_attention" in t.get("tags", [])]
    failed = [t for t in tests if t["status"] == "failed"]
    assert tests and failed
    for test in failed:
        assert "grader itself failed" not in test["output"], (test["name"], test["output"])
        assert "Traceback" not in test["output"], test["output"]
    phrase = SUBMISSIONS[name][1]
    assert any(phrase in t["output"] for t in failed), [t["output"][:200] for t in failed]
