"""Where the machine allows no namespaces, the notebook run falls back as the module worker does
(SECURITY.md, `process-group`): it still grades, with its environment, rlimits, private copy
and wall-clock kill, but learner code then reads what the harness's user can read. One real
nbgrader run of the probe notebook, with the probe forced to that level.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("nbgrader", reason="needs the notebook extra: pip install -e '.[notebook]'")

from autograder.notebook.course import only_assignment  # noqa: E402
from autograder.notebook.nbgrader_run import run_nbgrader  # noqa: E402
from autograder.runtime.harness import isolation  # noqa: E402
from tests.notebook.conftest import ROOT  # noqa: E402
from tests.notebook.probes import probe_notebook, probe_result  # noqa: E402


def test_without_namespaces_the_run_is_confined_to_its_process_group(tmp_path, monkeypatch):
    monkeypatch.setattr(isolation, "probe", lambda: (isolation.PROCESS_GROUP, ()))
    report = run_nbgrader(
        only_assignment(ROOT),
        notebooks={"probe": probe_notebook(tmp_path)},
        mode="autograde",
        cell_timeout=20.0,
        memory_mb=4096,
        keep=tmp_path / "graded",
    )
    assert report.ok, report.log[-3000:]
    assert report.isolation == {"level": isolation.PROCESS_GROUP, "hidden": 0}
    cells = [c for c in report.learners["probe"].cells if not c["needs_manual"]]
    assert len(cells) == 6 and all(c["score"] == c["max_score"] > 0 for c in cells), cells
    document = json.loads((tmp_path / "graded" / "probe.ipynb").read_text(encoding="utf-8"))
    got = probe_result(document)
    assert got["private_source"] == "FileNotFoundError"  # deleted at every level
    assert got["write_here"] == "written"
    assert got["hidden_tests"] not in ("PermissionError", "FileNotFoundError")  # the limit
