"""The encoder's wiring is graded apart from the parts it builds on (tests/graders/support/
standins.py), end to end through `autograder grade` on two submissions made from the reference:

* `stub_forward`: every file correct except MultiHeadAttention.forward, which still raises
  NotImplementedError. The encoder's wiring runs on known-good stand-ins, so the encoder keeps
  full marks while multi-head attention loses points.
* `stub_init`: MultiHeadAttention.__init__ still raises, so no EncoderLayer can be constructed:
  the encoder's messages say its wiring cannot be graded and that multi-head attention, which
  it builds on and whose own tests fail, is the part to fix first.
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
STUB = '        raise NotImplementedError("MultiHeadAttention is not done yet")\n'
CANNOT_BUILD = "could not be constructed, so its wiring cannot be graded"
FIX_MHA_FIRST = "Fix Multi-head attention first: this part builds on it"


def with_stub(dest: Path, method: str) -> Path:
    """The reference with `raise NotImplementedError` first in MultiHeadAttention.<method>."""
    package = dest / "assignments" / "t101"
    shutil.copytree(REFERENCE, package, ignore=shutil.ignore_patterns("__pycache__"))
    path = package / "multi_head_attention.py"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(f"    def {method}("))
    body = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith(":"))
    lines.insert(body + 1, STUB)  # before the docstring: still valid Python
    path.write_text("".join(lines), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("standins")
    subs = [with_stub(base / "stub_forward", "forward"), with_stub(base / "stub_init", "__init__")]
    out = base / "grades"
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", *map(str, subs), "--out", str(out)]
        + ["--course", str(ROOT / "course.toml"), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 1, completed.stderr  # graded, some test failed
    return {
        sub.name: json.loads((out / sub.name / "results.json").read_text(encoding="utf-8"))
        for sub in subs
    }


def component_tests(document, component: str) -> list[dict]:
    return [t for t in document["tests"] if t["tags"] == [component]]


def score(document, component: str) -> float:
    return sum(t["score"] for t in component_tests(document, component))


def test_a_stub_attention_forward_leaves_the_encoder_its_points(graded):
    document = graded["stub_forward"]
    assert score(document, "encoder") == pytest.approx(25.0)
    assert all(t["status"] == "passed" for t in component_tests(document, "encoder"))
    assert score(document, "multi_head_attention") < 25.0
    assert not document["extra_data"]["forbidden"]  # nn.MultiheadAttention of the stand-ins


def test_an_encoder_that_cannot_be_built_says_so_and_what_to_fix_first(graded):
    document = graded["stub_init"]
    encoder = component_tests(document, "encoder")
    assert score(document, "encoder") == 0.0
    assert score(document, "multi_head_attention") == 0.0
    # The ten wiring tests (visible and hidden) use stand-ins; the five structure tests
    # (parameter names, separate layers, dropout given on) read the learner's own modules and
    # fail as usual.
    wiring = [t for t in encoder if CANNOT_BUILD in t["output"]]
    assert (len(wiring), len(encoder)) == (10, 15)
    assert all(FIX_MHA_FIRST in t["output"] for t in encoder)
    assert "multi_head_attention.py" in wiring[0]["output"]  # the learner's own error, named
    assert FIX_MHA_FIRST in document["output"]
