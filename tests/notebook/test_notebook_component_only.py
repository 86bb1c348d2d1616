"""`autograder grade --component notebook` grades the notebook alone: a repository holding only
the notebook is graded (the issue: refused for want of the module package), the command exits 0
when every notebook test passes (it exited 1: the module components, not run, "score zero"),
its "Reports:" line lists notebook.graded.ipynb, and results.json's duration includes the
notebook's run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.notebook.conftest import EXAMPLES, LEARNER_PATH, ROOT

pytest.importorskip("nbgrader", reason="needs the notebook extra: pip install -e '.[notebook]'")


def grade(repository: Path, out: Path, *more: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograder", "grade", str(repository), "--out", str(out)]
    command += ["--course", str(ROOT / "course.toml"), "--component", "notebook", *more]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_a_repository_holding_only_the_notebook_is_graded_alone(tmp_path):
    repository = tmp_path / "nadia"
    (repository / LEARNER_PATH).parent.mkdir(parents=True)
    (repository / LEARNER_PATH).write_bytes((EXAMPLES / "correct" / LEARNER_PATH).read_bytes())
    out = tmp_path / "grades"
    done = grade(repository, out)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {t["tags"][0] for t in results["tests"]} == {"notebook"}
    assert results["score"] == 20.0
    # pytest never started: the whole run was the notebook's, at least its kernel's start-up
    assert results["extra_data"]["duration"] > 2.0
    reports = done.stdout.strip().splitlines()[-1]
    assert reports == (
        f"Reports: {out} (results.json, summary.md, junit.xml, grader.log, notebook.graded.ipynb)"
    )


def test_a_repository_without_the_notebook_is_refused_with_one_sentence(tmp_path):
    repository = tmp_path / "omar"
    repository.mkdir()
    done = grade(repository, tmp_path / "grades", "--quiet")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"omar was not graded: The submission {repository} holds no notebook to grade; expected "
        "assignments/notebooks/contextual_vectors.ipynb (the course's notebook, where the "
        "learner keeps it)."
    )
