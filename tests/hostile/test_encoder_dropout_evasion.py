"""An EncoderLayer that never passes dropout on to its sublayers, graded end to end.

`test_layer_gives_each_sublayer_its_dropout` compares each sublayer's kept dropout inside the
layer with what the learner's own class keeps when built alone with dropout=p. It let the
layer through when the sublayer inside kept nothing it could read: sublayers written
`self.dropout = nn.Dropout(dropout) if dropout else nn.Identity()` (a common idiom, and every
sublayer test passes) gave an EncoderLayer that drops nothing in train mode full marks. Nor
could a sublayer whose default dropout is the test's p (0.3) be told from one given p.

Both must cost the encoder that test.
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
TEST = "Encoder layer and stack: EncoderLayer(..., dropout=p) builds each sublayer with dropout p"

PASSED_ON = """\
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.add_norm_1 = AddNorm(d_model, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.add_norm_2 = AddNorm(d_model, dropout)"""
NOT_PASSED = """\
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.add_norm_1 = AddNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.add_norm_2 = AddNorm(d_model)"""
SUBLAYER_FILES = ("add_norm.py", "feed_forward.py", "multi_head_attention.py")
KEPT = "        self.dropout = nn.Dropout(dropout)"
IDENTITY_AT_ZERO = "        self.dropout = nn.Dropout(dropout) if dropout else nn.Identity()"


def _grade(tmp: Path, name: str, edits) -> dict:
    package = tmp / name / "assignments" / "t101"
    shutil.copytree(REFERENCE, package)
    for file, old, new in edits:
        text = (package / file).read_text()
        assert old in text, f"{file} changed: {old!r} is not in it"
        (package / file).write_text(text.replace(old, new))
    out = tmp / f"out-{name}"
    command = [sys.executable, "-m", "autograder", "grade", str(tmp / name), "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert (out / "results.json").exists(), done.stdout + done.stderr
    return json.loads((out / "results.json").read_text())


def _status(results: dict) -> str:
    (test,) = [t for t in results["tests"] if t["name"].startswith(TEST)]
    return test["status"]


@pytest.mark.hostile
def test_sublayers_keeping_no_dropout_at_zero_do_not_hide_it(tmp_path):
    edits = [("encoder.py", PASSED_ON, NOT_PASSED)]
    edits += [(file, KEPT, IDENTITY_AT_ZERO) for file in SUBLAYER_FILES]
    results = _grade(tmp_path, "identity", edits)
    assert _status(results) == "failed"
    others = [t for t in results["tests"] if not t["name"].startswith(TEST)]
    assert all(t["status"] == "passed" for t in others)  # the idiom itself costs nothing


@pytest.mark.hostile
def test_a_default_dropout_equal_to_the_tests_p_does_not_hide_it(tmp_path):
    edits = [("encoder.py", PASSED_ON, NOT_PASSED)]
    edits += [
        ("add_norm.py", "dropout: float = 0.0", "dropout: float = 0.3"),
        ("feed_forward.py", "dropout: float = 0.0", "dropout: float = 0.3"),
        ("multi_head_attention.py", "dropout: float = 0.0", "dropout: float = 0.3"),
    ]
    assert _status(_grade(tmp_path, "default", edits)) == "failed"
