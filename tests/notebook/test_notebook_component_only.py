"""`autograder grade --component notebook` grades the notebook alone (H43: it was refused as
not a component, though the notebook is one in every report), the module components scoring
zero with "no test ran", as for any --component."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.notebook.conftest import EXAMPLES, LEARNER_PATH, ROOT

pytest.importorskip("nbgrader", reason="needs the notebook extra: pip install -e '.[notebook]'")


def test_the_notebook_alone_is_graded(tmp_path):
    repository = tmp_path / "nadia"
    shutil.copytree(ROOT / "examples" / "submissions" / "amara", repository)
    (repository / LEARNER_PATH).parent.mkdir(parents=True)
    shutil.copyfile(EXAMPLES / "correct" / LEARNER_PATH, repository / LEARNER_PATH)
    out = tmp_path / "grades"
    command = [sys.executable, "-m", "autograder", "grade", str(repository), "--out", str(out)]
    command += ["--course", str(ROOT / "course.toml"), "--quiet", "--component", "notebook"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stderr  # graded; the modules' zero fails the run
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {t["tags"][0] for t in results["tests"]} == {"notebook"}
    assert results["score"] == 20.0
