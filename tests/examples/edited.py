"""Submissions made from the reference with a few source edits, graded end to end through
`autograder grade` (one run for several submissions): the learners' realistic mistakes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "solutions" / "t101"

#: {module file name: [(text, its replacement)]}; each text must occur exactly once
Edits = Mapping[str, Sequence[tuple[str, str]]]


def edited_reference(dest: Path, edits: Edits) -> Path:
    """A learner folder at `dest` holding the reference with `edits` made."""
    package = dest / "assignments" / "t101"
    shutil.copytree(REFERENCE, package, ignore=shutil.ignore_patterns("__pycache__"))
    for name, changes in edits.items():
        source = (package / name).read_text(encoding="utf-8")
        for old, new in changes:
            assert source.count(old) == 1, (name, old)
            source = source.replace(old, new)
        (package / name).write_text(source, encoding="utf-8")
    return dest


def grade(submissions: Sequence[Path], out: Path, *components: str) -> dict[str, dict]:
    """results.json of each submission (by folder name), graded in one run of `autograder
    grade` (only `components` when given); the run must end with some test failed."""
    chosen = [arg for c in components for arg in ("--component", c)]
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", *map(str, submissions), "--out", str(out)]
        + ["--course", str(ROOT / "course.toml"), "--quiet", *chosen],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 1, completed.stderr  # graded, some tests failed
    one = len(submissions) == 1
    return {
        sub.name: json.loads(
            ((out if one else out / sub.name) / "results.json").read_text(encoding="utf-8")
        )
        for sub in submissions
    }


def grade_one_edit(base: Path, name: str, edits: Edits, *components: str) -> dict:
    """results.json of the reference with `edits` made, graded alone (in `base`)."""
    learner = edited_reference(base / name, edits)
    return grade([learner], base / "grades", *components)[name]


def component_scores(results: dict) -> dict[str, float]:
    """{component: points scored} from a results.json."""
    scores: dict[str, float] = {}
    for test in results["tests"]:
        scores[test["tags"][0]] = scores.get(test["tags"][0], 0.0) + test["score"]
    return scores
