"""A module that fails to import costs its own file, not every file that imports it
(runtime/harness/package_imports.py, runtime/worker/unavailable_modules.py), end to end through
`autograder grade` on submissions made from the reference:

* `mha_syntax`: multi_head_attention.py has a syntax error. encoder.py imports it at its top,
  so before, the encoder failed to import too and scored 0 / 25. Now it is imported with a
  placeholder MultiHeadAttention, its wiring is graded on the course's stand-ins, and only the
  tests that read its attention's parameters fail, each saying to fix Multi-head attention
  first.
* `mha_missing_library`: the same, with an import of a library the grader lacks.
* `own_import_error`: encoder.py calls a function of add_norm.py at import time that raises.
  add_norm.py imports fine on its own, so the failure is the encoder's own and stays.
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
FIX_MHA_FIRST = "Fix Multi-head attention first: this part builds on it, and its own tests fail."
#: The encoder tests that read its self_attn's own parameters (the structure tests).
READS_ATTENTION_PARAMETERS = 4


def edited(dest: Path, module: str, old: str, new: str) -> Path:
    """The reference with ``old`` replaced by ``new`` (once) in ``module``.py."""
    package = dest / "assignments" / "t101"
    shutil.copytree(REFERENCE, package, ignore=shutil.ignore_patterns("__pycache__"))
    path = package / f"{module}.py"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (module, old)
    path.write_text(text.replace(old, new), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("imports")
    head = "from torch import nn\n"
    subs = [
        edited(base / "mha_syntax", "multi_head_attention", head, f"{head}def broken(:\n"),
        edited(
            base / "mha_missing_library",
            "multi_head_attention",
            head,
            f"{head}import library_the_grader_lacks\n",
        ),
        edited(base / "own_import_error", "add_norm", head, f"{head}\n\ndef check():\n    1 / 0\n"),
    ]
    encoder = subs[2] / "assignments/t101/encoder.py"
    text = encoder.read_text(encoding="utf-8")
    anchor = "from .add_norm import AddNorm\n"
    assert text.count(anchor) == 1
    encoder.write_text(text.replace(anchor, f"{anchor}from .add_norm import check\n\ncheck()\n"))
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


@pytest.mark.parametrize("name", ["mha_syntax", "mha_missing_library"])
def test_an_encoder_that_imports_a_broken_attention_keeps_its_wiring_points(graded, name):
    document = graded[name]
    attention = component_tests(document, "multi_head_attention")
    assert attention and all(t["score"] == 0 for t in attention)
    encoder = component_tests(document, "encoder")
    failed = [t for t in encoder if t["status"] != "passed"]
    assert (len(encoder), len(failed)) == (15, READS_ATTENTION_PARAMETERS)
    assert all(t["output"].endswith(FIX_MHA_FIRST) for t in failed)
    assert all("self_attn.W_q.weight" in t["output"] for t in failed)
    # the four structure tests weigh 2 of the encoder's 12 (tests/graders: weight markers)
    assert sum(t["score"] for t in encoder) == pytest.approx(25.0 * 10 / 12)


def test_an_import_failure_of_the_encoders_own_stays_its_own(graded):
    document = graded["own_import_error"]
    assert all(t["status"] == "passed" for t in component_tests(document, "add_norm"))
    encoder = component_tests(document, "encoder")
    assert encoder and all(t["score"] == 0 for t in encoder)
    assert all("ZeroDivisionError" in t["output"] for t in encoder)
    assert not any("first:" in t["output"] for t in encoder)
