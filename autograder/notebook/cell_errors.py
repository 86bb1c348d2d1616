"""What an autograded notebook's outputs say about its cells (trusted side, no nbgrader).

nbgrader executes the learner's notebook in the sandbox and writes it back with every output.
This module reads that document as data: which code cells raised (their error name and value),
which timed out, which ended the kernel or did not run after it (preprocessors.py), where an
error was raised (the innermost `Cell In[N], line L` frame of IPython's traceback, N being a
cell's execution count), and what each cell is called as the learner sees it in Jupyter (its
first line and the section heading above it; course.cell_label).

Everything here was written by learner code (outputs can be forged); it only names cells and
errors in feedback, and never decides a score beyond what nbgrader's own rule gives (a test cell
with an error output fails).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from autograder.notebook.course import cell_label, cell_text

#: How a cell that nbgrader interrupted after its time-out ends (no one presses Ctrl-C here).
TIMEOUT_ERRORS = ("CellTimeoutError", "KeyboardInterrupt")
#: The error names the kernel rule gives (preprocessors.KERNEL_DIED, NOT_RUN; the sandbox's copy
#: of that module is not imported here, as it needs nbgrader).
KERNEL_DIED, NOT_RUN = "KernelDied", "NotRun"
MAX_ERROR_CHARS = 600
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FRAME = re.compile(r"Cell In\[(\d+)\], line (\d+)(?:, in ([A-Za-z_]\w*))?")
_UNDEFINED = re.compile(r"name '([A-Za-z_]\w*)' is not defined")


@dataclass(frozen=True)
class CellError:
    """One code cell's first error output. ``raised_in``: (that cell's label, line, function)
    of the innermost traceback frame in another cell of the notebook (a learner's function that
    a test called), or None when the error was raised in the cell itself or in a library it
    called."""

    index: int
    grade_id: str | None
    label: str
    ename: str
    evalue: str
    raised_in: tuple[str, int, str] | None = None

    @property
    def timed_out(self) -> bool:
        return self.ename in TIMEOUT_ERRORS

    @property
    def undefined_name(self) -> str | None:
        """The name of a NameError ("name 'x' is not defined"), else None."""
        found = _UNDEFINED.search(self.evalue) if self.ename.endswith("NameError") else None
        return found[1] if found else None


def plain(text: str) -> str:
    return _ANSI.sub("", text)


def code_cells(document: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    cells = document.get("cells")
    cells = cells if isinstance(cells, list) else []
    return [
        (i, c) for i, c in enumerate(cells) if isinstance(c, dict) and c.get("cell_type") == "code"
    ]


def grade_id_of(cell: dict[str, Any]) -> str | None:
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
    return str(grade_id) if grade_id else None


def cell_errors(document: dict[str, Any]) -> list[CellError]:
    """The first error output of every code cell that has one, in notebook order."""
    cells = document.get("cells") if isinstance(document.get("cells"), list) else []
    by_count = {
        c.get("execution_count"): i
        for i, c in code_cells(document)
        if isinstance(c.get("execution_count"), int)
    }
    found = []
    for index, cell in code_cells(document):
        outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
        error = next(
            (o for o in outputs if isinstance(o, dict) and o.get("output_type") == "error"), None
        )
        if error is None:
            continue
        raised = _raised_in(error.get("traceback"), by_count, cell.get("execution_count"))
        if raised is not None:
            raised = (cell_label(cells, raised[0]), raised[1], raised[2])
        found.append(
            CellError(
                index=index,
                grade_id=grade_id_of(cell),
                label=cell_label(cells, index),
                ename=plain(str(error.get("ename", "")))[:100],
                evalue=plain(str(error.get("evalue", "")))[: MAX_ERROR_CHARS * 4],
                raised_in=raised,
            )
        )
    return found


def _raised_in(
    traceback: Any, by_count: dict[Any, int], own_count: Any
) -> tuple[int, int, str] | None:
    """(cell index, line, function) of the traceback's innermost notebook frame, when it is in
    another cell than the one that ran (own_count)."""
    if not isinstance(traceback, list):
        return None
    frames = [m for entry in traceback for m in _FRAME.finditer(plain(str(entry)))]
    if not frames:
        return None
    count, line, function = int(frames[-1][1]), int(frames[-1][2]), frames[-1][3] or ""
    if count == own_count or count not in by_count:
        return None
    return by_count[count], line, function


def binds(source: str, name: str) -> bool:
    """Whether a cell's source defines `name` at its top level (an assignment, a def, a class,
    an import, a for target; not inside a function); a source that does not parse: whether it
    mentions the name at all."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return re.search(rf"\b{re.escape(name)}\b", source) is not None
    found = _Binder(name)
    found.visit(tree)
    return found.hit


class _Binder(ast.NodeVisitor):
    """Looks for a top-level binding of one name (function bodies bind locals only)."""

    def __init__(self, name: str) -> None:
        self.name, self.hit = name, False

    def visit_Name(self, node: ast.Name) -> None:  # noqa: N802 (ast's visitor names)
        self.hit |= isinstance(node.ctx, ast.Store) and node.id == self.name

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.hit |= node.name == self.name  # its body is not visited

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _definition  # noqa: N815

    def visit_Lambda(self, node: ast.Lambda) -> None:  # noqa: N802
        pass

    def visit_alias(self, node: ast.alias) -> None:
        self.hit |= (node.asname or node.name.split(".")[0]) == self.name


def source_of(document: dict[str, Any], index: int) -> str:
    cells = document.get("cells") if isinstance(document.get("cells"), list) else []
    return cell_text(cells[index]) if 0 <= index < len(cells) else ""
