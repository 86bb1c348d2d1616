"""The sandboxed side of notebook grading: nbgrader's own commands on a private course copy.

Run by nbgrader_run.py as ``python -m autograder.notebook.runner MODE COURSE_DIR ASSIGNMENT
STUDENTS MEMORY_MB FILE_MB CELL_TIMEOUT OUT_JSON [PLAN]``. MODE is ``release`` (nbgrader
generate_assignment only) or ``autograde`` (generate_assignment, then nbgrader autograde of
each comma-separated STUDENT in turn, nbgrader imported once).

- Before importing nbgrader it confines itself with PLAN (runtime/worker/confine.confine) and
  applies the module worker's rlimits, so the learners' kernels (its children) inherit both.
- The kernels talk to nbgrader over Unix sockets (jupyter_client's `ipc`): a confined run has
  no network, not even loopback.
- It writes OUT_JSON (each student's cells: grade_id, score, max_score, needs_manual) beside
  each autograded notebook; the trusted side (autograde.py) checks all of it again against the
  source notebook and the autograded notebook's outputs.

Arguments and report: docs/internals/notebook-mistakes.md#the-runner.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

MAX_ERROR_CHARS = 600


def main(argv: list[str]) -> int:
    mode, course_dir, assignment, students, memory_mb, file_mb, cell_timeout, out = argv[:8]
    plan = json.loads(argv[8]) if len(argv) > 8 else {}
    from autograder.runtime.worker.confine import apply_worker_limits, confine

    confined = confine(plan)
    apply_worker_limits(int(memory_mb), int(file_mb))
    report: dict[str, Any] = {"ok": False, "log": "", "students": {}, "isolation": confined}
    try:
        names = [s for s in students.split(",") if s]
        timeout = float(cell_timeout)
        report.update(_run(mode, Path(course_dir), assignment, names, timeout, out, confined))
    finally:
        Path(out).write_text(json.dumps(report), encoding="utf-8")
    return 0 if report["ok"] else 3


def _run(
    mode: str,
    root: Path,
    assignment: str,
    students: list[str],
    timeout: float,
    out: str,
    confined: dict[str, Any],
) -> dict[str, Any]:
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    config.CourseDirectory.root = str(root)
    config.Execute.timeout = max(1, round(timeout))
    # Unix sockets, no TCP port; an absolute path, as the kernel starts in the notebook's folder.
    config.KernelManager.transport = "ipc"
    sockets = Path(os.environ.get("JUPYTER_RUNTIME_DIR") or root / ".kernels")
    sockets.mkdir(parents=True, exist_ok=True)
    config.KernelManager.ip = str(sockets / "kernel")
    api = NbGraderAPI(config=config)
    generated = api.generate_assignment(assignment, force=True, create=True)
    log = generated.get("log", "") + generated.get("error", "")
    if not generated["success"] or mode == "release":
        return {"ok": bool(generated["success"]), "log": log}
    # The gradebook now holds what autograde needs; the solutions leave the disk before any
    # learner code runs (the data files beside the notebook stay: autograde copies them).
    (root / "source" / assignment / f"{assignment}.ipynb").unlink()
    results: dict[str, Any] = {}
    for student in students:
        graded = api.autograde(assignment, student, force=True, create=True)
        log += graded.get("log", "") + graded.get("error", "")
        error = (str(graded.get("log", "")) + str(graded.get("error", "")))[-MAX_ERROR_CHARS * 8 :]
        results[student] = {"ok": bool(graded["success"]), "error": error}
        if graded["success"]:
            results[student].update(_scores(api, assignment, student))
        # Written after each learner, so a later learner's kill keeps the earlier grades.
        done = {"ok": True, "log": log, "students": results, "isolation": confined}
        Path(out).write_text(json.dumps(done))
    return {"ok": True, "log": log, "students": results}


def _scores(api: Any, assignment: str, student: str) -> dict[str, Any]:
    """Per grade cell: nbgrader's score from the gradebook. What each cell's outputs say (its
    error, a time-out, the kernel's end) the trusted side reads from the autograded notebook."""
    from nbgrader.api import Gradebook

    cells = []
    with Gradebook(api.coursedir.db_url) as gradebook:
        submitted = gradebook.find_submission_notebook(assignment, assignment, student)
        for grade in submitted.grades:
            cells.append(
                {
                    "grade_id": grade.name,
                    "score": grade.auto_score,
                    "max_score": grade.max_score,
                    "needs_manual": bool(grade.needs_manual_grade),
                }
            )
    return {"cells": cells}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
