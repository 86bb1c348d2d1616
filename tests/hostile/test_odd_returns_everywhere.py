"""Every function and forward of a submission returns the same odd value (None, a list, a
string, a tuple of two copies): graded end to end, each failing test gives the learner one
sentence and no grader fails itself.

Found by the H24 hostile pass: such values were read as arrays by the graders (``.dtype``,
``.mean()``, ``out[:, keep]``, unpacking, np.asarray of tensors that need gradients): 8 to 19
grader errors per learner.
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


def _function(name: str, value: str) -> str:
    head = f"\n_{name} = {name}\n\n\ndef {name}(*a, **k):\n"
    return head + f"    r = _{name}(*a, **k)\n    return {value}\n"


def _forward(cls: str, value: str) -> str:
    return (
        f"\n_{cls}_forward = {cls}.forward\n\n\ndef _{cls}_odd(self, *a, **k):\n"
        f"    r = _{cls}_forward(self, *a, **k)\n    return {value}\n"
        f"\n\n{cls}.forward = _{cls}_odd\n"
    )


PATCHES = {
    "softmax.py": lambda v: _function("softmax", v),
    "attention.py": lambda v: (
        _function("scaled_dot_product_attention", v) + _forward("SelfAttention", v)
    ),
    "feed_forward.py": lambda v: _forward("PositionwiseFeedForward", v),
    "add_norm.py": lambda v: _forward("AddNorm", v),
    "encoder.py": lambda v: _forward("EncoderLayer", v) + _forward("Encoder", v),
}
VALUES = {"none": "None", "list": "[r]", "string": "'abc'", "twice": "(r, r)"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    base = tmp_path_factory.mktemp("odd")
    folders = []
    for name, value in VALUES.items():
        package = base / name / "assignments" / "t101"
        shutil.copytree(REFERENCE, package)
        for file, patch in PATCHES.items():
            module = package / file
            module.write_text(module.read_text() + patch(value))
        folders.append(str(base / name))
    out = base / "out"
    command = [sys.executable, "-m", "autograder", "grade", *folders, "--out", str(out), "-q"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    return {name: json.loads((out / name / "results.json").read_text()) for name in VALUES}


@pytest.mark.hostile
@pytest.mark.parametrize("name", sorted(VALUES))
def test_no_grader_error_whatever_the_learner_returns(graded, name):
    failed = [t for t in graded[name]["tests"] if t["status"] == "failed"]
    assert len(failed) > 30  # the patched components really ran and failed
    for test in failed:
        assert "grader itself failed" not in test["output"], (test["name"], test["output"])
        assert "Traceback" not in test["output"], test["output"]
        assert test["output"][:1].isupper(), test["output"]
