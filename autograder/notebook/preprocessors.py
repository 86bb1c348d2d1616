"""Four nbgrader preprocessors that make notebook grading robust; nbgrader_config.py installs them.

- DropDuplicateIds (in place of DeduplicateIds) and RestoreCellOrder (after OverwriteCells) in
  the sanitize pipeline; ExecuteUntilKernelDies (in place of Execute, whose settings it reads)
  and StderrIsNotFailure (after it, before SaveAutoGrades) in the autograde pipeline.
- The kernel rule: a cell that ends the kernel gets an error output KERNEL_DIED, every later
  code cell one NOT_RUN, and the notebook is graded and written as far as it ran.
- The stderr rule: a cell fails only when it raises (an ``error`` output, a time-out included);
  what it wrote to stderr is kept as stdout lines prefixed with ``[stderr] ``.
- These classes run inside the sandboxed nbgrader process and import nbgrader: import this
  module only where the ``notebook`` extra is installed.

The pipelines and why: docs/internals/notebook-mistakes.md#nbgrader-pipelines-and-our-four-rules.
"""

from __future__ import annotations

from typing import Any

from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_output
from nbgrader.api import Gradebook
from nbgrader.preprocessors import Execute, NbGraderPreprocessor

STDERR_PREFIX = "[stderr] "
RESTORED = "This cell was missing from your notebook; the grader restored the course's version."
#: The error names (ename) of the outputs the kernel rule adds; the trusted side reads them.
KERNEL_DIED = "KernelDied"
NOT_RUN = "NotRun"
KERNEL_DIED_TEXT = "this cell ended the Python kernel (a crash, or it ran out of memory)"
NOT_RUN_TEXT = "not run: an earlier cell ended the Python kernel (its error says KernelDied)"


def _grade_id(cell: NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def stderr_as_stdout(text: str) -> str:
    """Every line of text prefixed with STDERR_PREFIX (the final newline kept as it was)."""
    lines = text.split("\n")
    tail = lines.pop() if lines and lines[-1] == "" else None
    marked = "\n".join(STDERR_PREFIX + line for line in lines)
    return marked + "\n" if tail is not None else marked


class StderrIsNotFailure(NbGraderPreprocessor):
    """Turn stderr stream outputs of code cells into marked stdout, so that only an error fails
    a test cell (the rule in the module docstring)."""

    def preprocess_cell(
        self, cell: NotebookNode, resources: dict[str, Any], index: int
    ) -> tuple[NotebookNode, dict[str, Any]]:
        if cell.cell_type != "code":
            return cell, resources
        for output in cell.outputs:
            if output.output_type == "stream" and output.name == "stderr":
                output.name = "stdout"
                output.text = stderr_as_stdout(output.text)
        return cell, resources


def _error_output(ename: str, evalue: str) -> NotebookNode:
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class ExecuteUntilKernelDies(Execute):
    """nbgrader's Execute (its timeout, interrupts and error outputs), except that a cell that
    ends the kernel does not end the grading: the kernel rule of the module docstring."""

    def preprocess(
        self, nb: NotebookNode, resources: Any = None, km: Any = None
    ) -> tuple[NotebookNode, dict[str, Any]]:
        self._ended_at: int | None = None
        return super().preprocess(nb, resources, km)

    def preprocess_cell(
        self, cell: NotebookNode, resources: dict[str, Any], index: int
    ) -> tuple[NotebookNode, dict[str, Any]]:
        if self._ended_at is not None:
            if cell.cell_type == "code":
                cell.outputs = [_error_output(NOT_RUN, NOT_RUN_TEXT)]
                cell.execution_count = None
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._ended_at = index  # what the cell printed before it is kept
            self.log.warning("Cell %d ended the kernel; the cells after it are not run.", index)
            cell.outputs.append(_error_output(KERNEL_DIED, KERNEL_DIED_TEXT))
            return cell, resources


class DropDuplicateIds(NbGraderPreprocessor):
    """In place of nbgrader's DeduplicateIds: the first cell of a grade_id keeps it, every later
    copy becomes a plain cell (its nbgrader metadata removed). nbgrader 0.9 kept the last copy
    and set the others' metadata to {}, which CheckCellMetadata then refused as an outdated
    schema: a learner who copied a cell in Jupyter (the copy keeps its grade_id) got no grade
    at all (H43); and an old attempt pasted at the end took the answer's place (H45). The
    first copy is where Jupyter's Restart & Run All runs it before the tests; later copies
    stay where they are, as plain cells, after them."""

    def preprocess(
        self, nb: NotebookNode, resources: dict[str, Any]
    ) -> tuple[NotebookNode, dict[str, Any]]:
        seen: set[str] = set()
        for cell in nb.cells:
            grade_id = _grade_id(cell)
            if grade_id is None:
                continue
            if grade_id in seen:
                self.log.warning("Cell with id '%s' exists multiple times!", grade_id)
                del cell.metadata["nbgrader"]
            else:
                seen.add(grade_id)
        return nb, resources


class RestoreCellOrder(NbGraderPreprocessor):
    """Put the course's cells back in the source notebook's order, and restore any locked cell
    (read-only code, instructions, tests) the learner deleted.

    A learner's own unlabelled cells travel with the labelled cell they followed (cells before
    the first labelled cell stay first). A moved test cell therefore runs where the course put
    it, after the code it tests, and a deleted read-only cell is back before execution. A deleted
    solution cell is restored as the learner received it (its stub), so it scores nothing.
    """

    def preprocess(
        self, nb: NotebookNode, resources: dict[str, Any]
    ) -> tuple[NotebookNode, dict[str, Any]]:
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            source = gradebook.find_notebook(info["notebook"], info["assignment"])
            order = [cell.name for cell in source.source_cells]
            points = {cell.name: cell.max_score for cell in source.grade_cells}
            solutions = {cell.name for cell in source.solution_cells}
            missing = {
                cell.name: restored_cell(
                    cell.name,
                    cell.cell_type,
                    cell.source,
                    locked=cell.locked,
                    checksum=cell.checksum,
                    points=points.get(cell.name),
                    solution=cell.name in solutions,
                )
                for cell in source.source_cells
            }
        nb.cells = reorder(nb.cells, order, missing, self.log)
        return nb, resources


def reorder(
    cells: list[NotebookNode], order: list[str], missing: dict[str, NotebookNode], log: Any = None
) -> list[NotebookNode]:
    """cells laid out in `order` (source cell ids); ids absent from cells come from `missing`.
    A learner's own (unlabelled) cells follow the labelled cell they followed; a restored
    read-only cell goes before those of the cell before it, a restored test after them."""
    groups: dict[str | None, list[NotebookNode]] = {None: []}
    labelled: dict[str, NotebookNode] = {}
    current: str | None = None
    strays: list[NotebookNode] = []
    for cell in cells:
        grade_id = _grade_id(cell)
        if grade_id in order and grade_id not in labelled:
            labelled[grade_id] = cell
            current = grade_id
            groups[current] = []
        elif grade_id is not None and grade_id not in order:
            strays.append(cell)  # a label the course does not know: keep it, at the end
        else:
            groups[current].append(cell)
    result = list(groups[None])
    followers: list[NotebookNode] = []  # the last placed labelled cell's own cells, still to place
    before_answer = False  # whether that labelled cell is an answer (a solution cell)
    for grade_id in order:
        cell = labelled.get(grade_id)
        if cell is None:
            cell = missing[grade_id]
            if log is not None:
                log.warning("Cell %s was missing from the submission; restored it.", grade_id)
            if not _meta(cell).get("grade") and not before_answer:
                # Read-only code or text goes before the learner's cells that now follow the
                # cell before it when that is no answer: they may need it (H43: a restored
                # `loaders` ran after the learner's cell that called load_vectors). After an
                # answer, they may complete it (H45: a helper the restored cell calls), and a
                # test goes after them in any case.
                result.append(cell)
                continue
        result.extend(followers)
        result.append(cell)
        followers = groups.get(grade_id, [])
        before_answer = bool(_meta(cell).get("solution"))
    return result + followers + strays


def _meta(cell: NotebookNode) -> dict[str, Any]:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def restored_cell(
    grade_id: str,
    cell_type: str,
    source: str,
    *,
    locked: bool,
    checksum: str | None,
    points: float | None,
    solution: bool,
) -> NotebookNode:
    """A source cell as the learner received it, with its nbgrader metadata and a note saying
    it was restored (a comment in code, a line in Markdown)."""
    metadata: dict[str, Any] = {
        "grade": points is not None,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        metadata["points"] = points
    if checksum:
        metadata["checksum"] = checksum
    if cell_type == "code":
        return new_code_cell(f"# {RESTORED}\n{source}", metadata={"nbgrader": metadata})
    return new_markdown_cell(f"*{RESTORED}*\n\n{source}", metadata={"nbgrader": metadata})
