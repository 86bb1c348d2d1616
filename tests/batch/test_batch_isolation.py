"""Learner code in a batch cannot read the batch's output folder: other learners' reports, or
the compiled hidden graders that grade-class caches in DIR/.pycache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.runtime.harness import isolation

from .conftest import TOY, TOY_COURSE

PROBE = """
import os

_out = {out!r}
_found = []
if os.path.exists(os.path.join(_out, "aaa", "results.json")):
    _found.append("another learner's results.json")
_cache = os.path.join(_out, ".pycache")
if os.path.isdir(_cache) and os.listdir(_cache):
    _found.append("the compiled graders in DIR/.pycache")
raise RuntimeError("probe saw: " + ("; ".join(_found) or "nothing"))
"""


def test_learner_code_sees_neither_reports_nor_compiled_graders(tmp_path: Path) -> None:
    if isolation.probe()[0] != isolation.NAMESPACES:
        pytest.skip(f"this machine gives the worker {isolation.probe()[0]}, not namespaces")
    roster, out = tmp_path / "class", tmp_path / "out"
    for learner in ("aaa", "zzz"):
        shutil.copytree(TOY / "solution" / "toypkg", roster / learner / "toypkg")
    (roster / "zzz" / "toypkg" / "scale.py").write_text(PROBE.format(out=str(out)))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # so that DIR/.pycache is written
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade-class", str(roster), "--out", str(out)]
        + ["--course", str(TOY_COURSE), "--jobs", "1", "-q"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stderr
    assert (out / "aaa" / "results.json").is_file() and any((out / ".pycache").iterdir())
    tests = json.loads((out / "zzz" / "results.json").read_text())["tests"]
    seen = {t["output"] for t in tests if "probe saw" in t["output"]}
    assert seen and all("probe saw: nothing" in message for message in seen), seen
