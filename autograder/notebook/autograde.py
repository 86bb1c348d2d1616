"""Grading a learner's notebook into TestResults of the component `notebook` (trusted side).

One autograded nbgrader test cell is one test, worth its nbgrader points (its weight under the
points rule of results.py; the component's points are the sum of those cells' points). nbgrader
decides pass or fail inside the sandbox (autograder/notebook/runner.py); this side only accepts
the cells the instructor's source notebook defines, with the points it gives them, and turns
each failure into a sentence. A run that could not finish fails every test with one sentence.
A message never quotes a line of the hidden tests (hidden.scrub).

The manually graded written answer is not an autograded test: it is graded by the instructor
in nbgrader (see docs/notebook.md) and never counts in results.json.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from autograder.notebook.course import GradeCell, NotebookAssignment
from autograder.notebook.hidden import hidden_lines, scrub
from autograder.notebook.nbgrader_run import (
    MAX_NOTEBOOK_BYTES,
    LearnerReport,
    RunReport,
    run_nbgrader,
)
from autograder.results import TestResult

DEFAULT_CELL_TIMEOUT = 60.0
#: The autograded notebook (with outputs) written beside the reports, for the learner.
FEEDBACK_NAME = "notebook.graded.ipynb"

NOT_INSTALLED = (
    "Your notebook could not be graded because the grader lacks the notebook tools (install "
    "t101-autograder[notebook]); this is not your fault and your instructor has been told."
)
TOO_LARGE = (
    "Your notebook {path} is larger than {limit} MB, so it was not graded; clear large outputs "
    "(Kernel > Restart & Clear Output) and submit it again."
)
NOT_A_NOTEBOOK = "Your notebook {path} could not be read by nbgrader: {detail}"
NOT_JSON_SIGNS = ("NotJSONError", "not appear to be JSON", "JSONDecodeError", "Expecting value")
RAN_TOO_LONG = (
    "Your notebook did not finish within {seconds:g} seconds in total, so no cell could be "
    "graded; look for a cell that loops forever or ignores interrupts."
)
RUN_FAILED = (
    "Your notebook could not be graded (nbgrader stopped with exit status {status}); check "
    "that it opens in Jupyter and runs with Kernel > Restart & Run All."
)
NOT_GRADED = (
    "nbgrader could not grade your notebook; check that it opens in Jupyter and runs with "
    "Kernel > Restart & Run All."
)
KERNEL_DIED = (
    "A cell of your notebook ended its Python kernel (os._exit, sys.exit in a subprocess, a "
    "crash, or running out of memory), so no test could run; find it with Kernel > Restart & "
    "Run All in Jupyter."
)
OUTPUT_TOO_LARGE = (
    "Your notebook printed more than the grader can keep (its files may not grow beyond the "
    "limit of one run), so it was not graded; print less, e.g. a summary instead of a whole "
    "array, and submit it again."
)
METADATA_CHANGED = (
    "The grading information of a cell in your notebook was changed (a test's id or points, or "
    "whether a cell is read-only), so it could not be graded; undo that change, or copy your "
    "answers into a fresh copy of the notebook, and submit it again."
)
#: (signs in nbgrader's error, the sentence for the learner), checked in order
WHY_NOT_GRADED = (
    (("DeadKernelError", "Kernel died"), KERNEL_DIED),
    (("File too large",), OUTPUT_TOO_LARGE),
    (
        ("SchemaTooOldError", "SchemaTooNewError", "metadata may be corrupted", "checksums"),
        METADATA_CHANGED,
    ),
)
CELL_TIMED_OUT = (
    "This test did not finish within {seconds:g} seconds; the cell was interrupted "
    "(an infinite loop?)."
)
# An earlier cell is named as the learner sees it in Jupyter (NotebookAssignment.cell_labels:
# its first line, the section above it, then its grade_id for instructors). A test cell is named
# by its grade_id, the test's name in every report (its message's first sentence is what the
# class report and the terminal quote, so it stays short).
EARLIER_TIMEOUT = (
    "An earlier cell, {cells}, did not finish within {seconds:g} seconds and was interrupted, "
    "so what it should define may be missing."
)
EARLIER_ERROR = "An earlier cell, {cell}, failed first; fix that one first: {error}"
CELL_FAILED = "Test cell {grade_id} failed: {error}"
CELL_FAILED_NO_ERROR = "Test cell {grade_id} did not pass."
MISSING_FROM_RUN = "Test cell {grade_id} was not graded; the grader has recorded why."


def notebook_tools_installed() -> bool:
    """True when nbgrader (the `notebook` extra) can be imported by the runner."""
    return importlib.util.find_spec("nbgrader") is not None


def grade_notebook(
    assignment: NotebookAssignment,
    notebook: Path,
    *,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    memory_mb: int = 4096,
    keep: Path | None = None,
    grader_errors: list[str] | None = None,
    hide: Sequence[Path] = (),
) -> list[TestResult]:
    """The autograded tests of one learner's `notebook`, graded by nbgrader in its own sandbox.
    `keep`: a folder for the autograded notebook (FEEDBACK_NAME, the learner's copy with
    outputs). Problems that are not the learner's are also appended to `grader_errors`.
    `hide`: folders the run must not see besides the course root (the learner's repository)."""
    graded = grade_notebooks(
        assignment,
        {FEEDBACK_NAME.removesuffix(".ipynb"): notebook},
        cell_timeout=cell_timeout,
        memory_mb=memory_mb,
        keep=keep,
        grader_errors=grader_errors,
        hide=hide,
    )
    return next(iter(graded.values()))


def grade_notebooks(
    assignment: NotebookAssignment,
    notebooks: dict[str, Path],
    *,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    memory_mb: int = 4096,
    keep: Path | None = None,
    grader_errors: list[str] | None = None,
    hide: Sequence[Path] = (),
) -> dict[str, list[TestResult]]:
    """{name: tests} for several notebooks graded in ONE sandboxed nbgrader run (one start-up
    cost). Only for notebooks of one origin: learners in one run share one sandbox."""
    errors = grader_errors if grader_errors is not None else []
    cells = [c for c in assignment.grade_cells() if not c.manual]

    def every(message: str, kind: str) -> list[TestResult]:
        return failed_everywhere(assignment, message, kind)

    if not notebook_tools_installed():
        errors.append("nbgrader is not installed; the notebook extra is missing.")
        return {name: every(NOT_INSTALLED, "grader_error") for name in notebooks}
    results: dict[str, list[TestResult]] = {}
    runnable: dict[str, Path] = {}
    for name, notebook in notebooks.items():
        if notebook.stat().st_size > MAX_NOTEBOOK_BYTES:
            limit = MAX_NOTEBOOK_BYTES // (1024 * 1024)
            message = TOO_LARGE.format(path=assignment.learner_path, limit=limit)
            results[name] = every(message, "too_large")
        else:
            runnable[name] = notebook
    report = run_nbgrader(
        assignment,
        notebooks=runnable,
        mode="autograde",
        cell_timeout=cell_timeout,
        memory_mb=memory_mb,
        keep=keep,
        hide=hide,
    )
    hidden = hidden_lines(json.loads(assignment.source_notebook.read_text(encoding="utf-8")))
    for name in runnable:
        learner = report.learners.get(name)
        if learner is None or not learner.ok:
            kind = "timeout" if report.killed else "exception"
            results[name] = every(_run_failure(report, learner, assignment), kind)
        else:
            tests = _cell_results(assignment, cells, learner, cell_timeout, errors)
            results[name] = [replace(t, message=scrub(t.message, hidden)) for t in tests]
    return {name: results[name] for name in notebooks}


def _cell_results(
    assignment: NotebookAssignment,
    cells: list[GradeCell],
    learner: LearnerReport,
    cell_timeout: float,
    errors: list[str],
) -> list[TestResult]:
    by_id = {str(c.get("grade_id")): c for c in learner.cells}
    labels = assignment.cell_labels()
    results = []
    for cell in cells:
        got = by_id.get(cell.grade_id)
        if got is None:
            errors.append(f"nbgrader reported no grade for the test cell {cell.grade_id}.")
            message = MISSING_FROM_RUN.format(grade_id=cell.grade_id)
            results.append(
                _test(assignment, cell.grade_id, cell.points, False, message, "grader_error")
            )
            continue
        score = got.get("score")
        passed = isinstance(score, int | float) and float(score) >= cell.points > 0
        # nbgrader's own rule, read again from the autograded notebook: a test cell with an
        # error output fails, whatever the gradebook (which learner code can write) says (H43).
        passed = passed and not got.get("error")
        graded = {c.grade_id for c in cells}
        message = (
            ""
            if passed
            else _cell_message(cell.grade_id, got, learner, cell_timeout, graded, labels)
        )
        kind = "" if passed else ("timeout" if cell.grade_id in learner.timeouts else "exception")
        results.append(_test(assignment, cell.grade_id, cell.points, passed, message, kind))
    return results


def failed_everywhere(assignment: NotebookAssignment, message: str, kind: str) -> list[TestResult]:
    """Every autograded test cell of the assignment failed with one sentence (a notebook that
    could not be graded at all)."""
    cells = [c for c in assignment.grade_cells() if not c.manual]
    return [_test(assignment, c.grade_id, c.points, False, message, kind) for c in cells]


def _test(
    assignment: NotebookAssignment,
    grade_id: str,
    points: float,
    passed: bool,
    message: str,
    kind: str,
) -> TestResult:
    return TestResult(
        name=grade_id,
        nodeid=f"{assignment.learner_path}::{grade_id}",
        component=assignment.component,
        weight=points,
        status="passed" if passed else "failed",
        message=message,
        visibility="visible",
        error_kind=kind,
    )


def _cell_message(
    grade_id: str,
    got: dict,
    report: LearnerReport,
    cell_timeout: float,
    graded: set[str],
    labels: Mapping[str, str] | None = None,
) -> str:
    """The failing test's own error, plus the first earlier non-test cell that failed (or
    timed out), which is usually the real cause. ``labels``: each cell's name as the learner
    sees it (NotebookAssignment.cell_labels); a cell without one is named by its grade_id."""
    labels = labels or {}

    def name(cell: str) -> str:
        return labels.get(cell, cell)

    if grade_id in report.timeouts:
        return CELL_TIMED_OUT.format(seconds=cell_timeout)
    error = str(got.get("error") or "").strip()
    message = (
        _full_stop(CELL_FAILED.format(grade_id=grade_id, error=error))
        if error
        else CELL_FAILED_NO_ERROR.format(grade_id=grade_id)
    )
    earlier = []
    for cell, text in report.failed:
        if cell == grade_id:
            break
        earlier.append((cell, text))
    timed_out = [cell for cell, _ in earlier if cell in report.timeouts]
    if timed_out:
        cells = " and ".join(name(cell) for cell in timed_out)
        message += " " + EARLIER_TIMEOUT.format(cells=cells, seconds=cell_timeout)
    else:
        first = next(((cell, text) for cell, text in earlier if cell not in graded), None)
        if first is not None:
            error = first[1].strip()
            message += " " + _full_stop(EARLIER_ERROR.format(cell=name(first[0]), error=error))
    return message


def _full_stop(sentence: str) -> str:
    """The sentence ending with a full stop, unless it already ends a sentence: an error's
    own text ("name 'x' is not defined") is quoted as it came."""
    return sentence if sentence.endswith((".", "!", "?")) else f"{sentence}."


def _run_failure(
    report: RunReport, learner: LearnerReport | None, assignment: NotebookAssignment
) -> str:
    if report.killed:
        return RAN_TOO_LONG.format(seconds=report.wall_timeout)
    error = learner.error if learner is not None else ""
    if any(sign in error for sign in NOT_JSON_SIGNS):
        return NOT_A_NOTEBOOK.format(
            path=assignment.learner_path, detail="it is not a valid .ipynb (JSON) file."
        )
    for signs, sentence in WHY_NOT_GRADED:
        if any(sign in error for sign in signs):
            return sentence
    if report.ok:  # the run went on; nbgrader gave up on this notebook alone
        return NOT_GRADED
    return RUN_FAILED.format(status=report.exit_status)
