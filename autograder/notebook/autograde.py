"""Grading a learner's notebook into TestResults of the component `notebook` (trusted side).

- One autograded nbgrader test cell is one test, worth its nbgrader points (its weight under the
  points rule of results.py); the component's points are the sum of those cells' points.
- nbgrader decides pass or fail inside the sandbox (runner.py). This side accepts only the cells
  the instructor's source notebook defines, with the points it gives them, and fails a test cell
  whose autograded output holds an error whatever the gradebook says.
- Each failure is one sentence naming the real cause and the cell (cell_messages.py); a run that
  could not finish fails every test with one sentence. A message never quotes a line of the
  hidden tests (hidden.scrub). Cells put back or moved back are said in the notes (restored.py).
- A cell graded by hand (the written answer) is not an autograded test: part_notes.py shows it
  as pending, and the instructor grades it in nbgrader's formgrader (class_gradebook.py).

Design: docs/internals/notebook-mistakes.md#what-the-trusted-side-accepts.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder.notebook.cell_errors import CellError, cell_errors, source_of
from autograder.notebook.cell_messages import cell_message
from autograder.notebook.course import GradeCell, NotebookAssignment
from autograder.notebook.hidden import hidden_lines, scrub
from autograder.notebook.nbgrader_run import (
    MAX_NOTEBOOK_BYTES,
    LearnerReport,
    RunReport,
    run_nbgrader,
)
from autograder.notebook.restored import restored_notes
from autograder.notebook.shell_reach import ShellReach, shell_reaches
from autograder.results import ReviewFlag, TestResult

DEFAULT_CELL_TIMEOUT = 60.0  # course.toml's [notebook] cell_timeout, when none is given
DEFAULT_MEMORY_MB = 4096  # and its memory_mb
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
MISSING_FROM_RUN = "Test cell {grade_id} was not graded; the grader has recorded why."
SHELL_REACHED = (
    "Your notebook's cell {label} reaches into the IPython shell or kernel at line {line} "
    "({what}), which no answer needs and which can change how the tests run, so your notebook "
    "was not run, its autograded tests score zero, and your instructor will review it{more}."
)
MORE_REACHES = "; {count} more such places are listed for your instructor"
SHELL_FLAG = (
    "{path} cell {label} line {line}: {what} reaches into the IPython shell or kernel, so the "
    "notebook was not run and its autograded tests scored zero."
)


def notebook_tools_installed() -> bool:
    """True when nbgrader (the `notebook` extra) can be imported by the runner."""
    return importlib.util.find_spec("nbgrader") is not None


@dataclass(frozen=True)
class NotebookGrade:
    """One learner's graded notebook: a test per autograded cell, and the notes for the learner
    (cells the grader put back or moved back)."""

    tests: list[TestResult]
    notes: list[str] = field(default_factory=list)
    #: For the instructor's review: each reach into the IPython shell (shell_reach.py)
    review: list[ReviewFlag] = field(default_factory=list)


def grade_notebook(
    assignment: NotebookAssignment,
    notebook: Path,
    *,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    memory_mb: int = DEFAULT_MEMORY_MB,
    keep: Path | None = None,
    grader_errors: list[str] | None = None,
    hide: Sequence[Path] = (),
) -> NotebookGrade:
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
    memory_mb: int = DEFAULT_MEMORY_MB,
    keep: Path | None = None,
    grader_errors: list[str] | None = None,
    hide: Sequence[Path] = (),
) -> dict[str, NotebookGrade]:
    """{name: grade} for several notebooks graded in ONE sandboxed nbgrader run (one start-up
    cost). Only for notebooks of one origin: learners in one run share one sandbox. A notebook
    whose own cells reach into the IPython shell (shell_reach.py) is not run: its tests fail
    with one sentence and each reach is flagged for review."""
    errors = grader_errors if grader_errors is not None else []
    cells = [c for c in assignment.grade_cells() if not c.manual]

    def every(message: str, kind: str) -> NotebookGrade:
        return failed_everywhere(assignment, message, kind)

    if not notebook_tools_installed():
        errors.append("nbgrader is not installed; the notebook extra is missing.")
        return {name: every(NOT_INSTALLED, "grader_error") for name in notebooks}
    results: dict[str, NotebookGrade] = {}
    runnable: dict[str, Path] = {}
    for name, notebook in notebooks.items():
        if notebook.stat().st_size > MAX_NOTEBOOK_BYTES:
            limit = MAX_NOTEBOOK_BYTES // (1024 * 1024)
            message = TOO_LARGE.format(path=assignment.learner_path, limit=limit)
            results[name] = every(message, "too_large")
        elif reached := _shell_reaches(assignment, notebook):
            results[name] = _refused(assignment, reached)
        else:
            runnable[name] = notebook
    if not runnable:  # nothing to run: no sandbox to start
        return {name: results[name] for name in notebooks}
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
    for name, notebook in runnable.items():
        learner = report.learners.get(name)
        if learner is None or not learner.ok:
            kind = "timeout" if report.killed else "exception"
            results[name] = every(_run_failure(report, learner, assignment), kind)
            continue
        limits = (cell_timeout, memory_mb)
        tests = _cell_results(assignment, cells, learner, limits, errors)
        scrubbed = [replace(t, message=scrub(t.message, hidden)) for t in tests]
        results[name] = NotebookGrade(scrubbed, restored_notes(assignment, notebook))
    return {name: results[name] for name in notebooks}


def _shell_reaches(assignment: NotebookAssignment, notebook: Path) -> list[ShellReach]:
    """The reaches into the IPython shell in the learner's own cells ([] when the notebook is
    no JSON notebook: nbgrader then says why)."""
    try:
        document = json.loads(notebook.read_bytes())
    except (ValueError, RecursionError):
        return []
    source = json.loads(assignment.source_notebook.read_text(encoding="utf-8"))
    return shell_reaches(document, source) if isinstance(document, dict) else []


def _refused(assignment: NotebookAssignment, reached: list[ShellReach]) -> NotebookGrade:
    """Every autograded test failed with the first reach's sentence; each reach a flag."""
    first, count = reached[0], len(reached) - 1
    more = MORE_REACHES.format(count=count) if count else ""
    message = SHELL_REACHED.format(label=first.label, line=first.line, what=first.what, more=more)
    path = assignment.learner_path.as_posix()
    flags = [
        ReviewFlag(
            path,
            r.line,
            r.what,
            SHELL_FLAG.format(path=path, label=r.label, line=r.line, what=r.what),
        )
        for r in reached
    ]
    return replace(failed_everywhere(assignment, message, "tamper"), review=flags)


def _cell_results(
    assignment: NotebookAssignment,
    cells: list[GradeCell],
    learner: LearnerReport,
    limits: tuple[float, float],
    errors: list[str],
) -> list[TestResult]:
    """A test per autograded cell: nbgrader's score from the gradebook, failed when the cell's
    output holds an error (the gradebook is learner-writable, H43); each failure's message."""
    by_id = {str(c.get("grade_id")): c for c in learner.cells}
    document = learner.document or {}
    found = cell_errors(document)
    sources = {e.index: source_of(document, e.index) for e in found}
    graded = {c.grade_id for c in cells}
    results = []
    for cell in cells:
        got = by_id.get(cell.grade_id)
        if got is None:
            errors.append(f"nbgrader reported no grade for the test cell {cell.grade_id}.")
            message = MISSING_FROM_RUN.format(grade_id=cell.grade_id)
            results.append(_test(assignment, cell, False, message, "grader_error"))
            continue
        own = next((e for e in found if e.grade_id == cell.grade_id), None)
        score = got.get("score")
        passed = isinstance(score, int | float) and float(score) >= cell.points > 0
        passed = passed and own is None and learner.document is not None
        message = "" if passed else _message(cell.grade_id, found, limits, graded, sources)
        results.append(_test(assignment, cell, passed, message, "" if passed else _kind(own)))
    return results


def _message(
    grade_id: str,
    found: list[CellError],
    limits: tuple[float, float],
    graded: set[str],
    sources: dict[int, str],
) -> str:
    cell_timeout, memory_mb = limits
    return cell_message(
        grade_id,
        found,
        cell_timeout=cell_timeout,
        memory_mb=memory_mb,
        graded=graded,
        sources=sources,
    )


def _kind(own: CellError | None) -> str:
    return "timeout" if own is not None and own.timed_out else "exception"


def failed_everywhere(assignment: NotebookAssignment, message: str, kind: str) -> NotebookGrade:
    """Every autograded test cell of the assignment failed with one sentence (a notebook that
    could not be graded at all)."""
    cells = [c for c in assignment.grade_cells() if not c.manual]
    return NotebookGrade([_test(assignment, c, False, message, kind) for c in cells])


def _test(
    assignment: NotebookAssignment,
    cell: GradeCell,
    passed: bool,
    message: str,
    kind: str,
) -> TestResult:
    return TestResult(
        name=cell.grade_id,
        nodeid=f"{assignment.learner_path}::{cell.grade_id}",
        component=assignment.component,
        weight=cell.points,
        status="passed" if passed else "failed",
        message=message,
        visibility="visible",
        error_kind=kind,
    )


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
