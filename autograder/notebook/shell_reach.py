"""The static check of a learner's notebook cells for reaches into the IPython shell (trusted side).

nbgrader runs the instructor's tests in the learner's own kernel, so a cell that reaches the
shell (``get_ipython().input_transformers_cleanup``, ``set_custom_exc``, ``events.register``, a
magic) could rewrite or silence every later test cell and print the hidden tests.

- Decided here, before the run, from the notebook read as data: each code cell the learner wrote
  (all but the test and read-only cells nbgrader puts back, by grade_id) is parsed with `ast`
  after IPython's TransformerManager has turned its magics into calls.
- Every reach an answer never needs is a ShellReach; the vocabulary shares the .py static
  check's (static_check/scan.py) code runners, importers, loaders and introspection.

What it finds and cannot: docs/instructor/notebook.md, "The honest limit". Design:
docs/internals/notebook-mistakes.md#the-shell-reach-check.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from autograder.notebook.cell_errors import code_cells, grade_id_of
from autograder.notebook.course import cell_label, cell_text
from autograder.static_check.watched_names import (
    CODE_RUNNERS,
    IMPORTERS,
    INTROSPECTION,
    LOADERS,
    PROCESS_CALLS,
)

#: Modules that reach the shell, the kernel, the import machinery or the process.
SHELL_MODULES = frozenset(
    {"IPython", "ipykernel", "jupyter_client", "zmq", "traitlets", "importlib", "builtins",
     "__builtin__", "__main__", "runpy", "gc", "inspect", "nbgrader", "nbformat"}
)  # fmt: skip
#: Attributes of the shell and its kernel (and sys's module table): never part of an answer.
SHELL_ATTRIBUTES = frozenset(
    {"input_transformers_cleanup", "input_transformers_post", "input_transformer_manager",
     "ast_transformers", "set_custom_exc", "custom_exceptions", "events", "register_magics",
     "register_magic_function", "run_cell", "run_line_magic", "run_cell_magic", "user_ns",
     "user_global_ns", "showtraceback", "displayhook", "display_pub", "kernel", "modules"}
)  # fmt: skip
#: Names that are the shell, its history of inputs (the tests' sources among them), or a way
#: to run or find code by a computed name.
SHELL_NAMES = frozenset(
    {"get_ipython", "__IPYTHON__", "In", "Out", "_ih", "_oh", "_i", "_ii", "_iii",
     "__builtins__", "globals", "locals", "vars"}
    | {name.split(".")[-1] for name in CODE_RUNNERS | IMPORTERS if name.startswith("builtins.")}
)  # fmt: skip
#: Magics that only time or draw (their code is scanned like any other).
HARMLESS_MAGICS = frozenset({"matplotlib", "time", "timeit"})
ATTRIBUTE_CALLS = frozenset({"getattr", "setattr", "delattr", "hasattr"})
UNREADABLE = "code the grader cannot read (it does not parse as Python)"


@dataclass(frozen=True)
class ShellReach:
    """One reach into the shell: the cell (notebook index, label as feedback names it), the
    line in the cell (1-based) and what was found, e.g. ``get_ipython``."""

    index: int
    label: str
    line: int
    what: str


def shell_reaches(document: dict[str, Any], source: dict[str, Any]) -> list[ShellReach]:
    """Every reach into the shell in the learner's own code cells of `document` (the submitted
    notebook, as data); `source` is the course's source notebook, whose non-solution cells
    nbgrader puts back (their grade_ids are skipped). A cell that does not parse even after
    IPython's transformation is skipped (the kernel's own parser refuses it the same way, unless
    a reach found elsewhere rewrote it); without IPython it is one reach (UNREADABLE)."""
    restored = {
        grade_id_of(cell)
        for _, cell in code_cells(source)
        if not cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    } - {None}
    cells = document.get("cells", []) if isinstance(document, dict) else []
    found = []
    for index, cell in code_cells(document):
        if grade_id_of(cell) in restored:
            continue
        label = cell_label(cells, index)
        for line, what in cell_reaches(cell_text(cell)):
            found.append(ShellReach(index, label, line, what))
    return found


def cell_reaches(text: str, offset: int = 0) -> list[tuple[int, str]]:
    """(line, what) of each reach in one cell's source, magics included."""
    python, as_kernel = _python(text)
    try:
        tree = ast.parse(python)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [] if as_kernel else [(1 + offset, UNREADABLE)]
    found: list[tuple[int, str]] = []
    nodes: list[ast.AST] = [tree]
    while nodes:
        node = nodes.pop()
        magic = _magic(node)
        if magic is None:
            what = _reach(node)
            if what:
                found.append((getattr(node, "lineno", 1) + offset, what))
            nodes.extend(ast.iter_child_nodes(node))
            continue
        what, body = magic  # the magic's own call is not looked into: its name is what it is
        if what not in HARMLESS_MAGICS:
            found.append((getattr(node, "lineno", 1) + offset, f"the IPython shell's {what}"))
        elif body is not None:
            found += cell_reaches(body, getattr(node, "lineno", 1) + offset)
    return sorted(
        (line, what)
        for line, what in set(found)
        if not any(what != other and what in other for at, other in found if at == line)
    )


def _python(text: str) -> tuple[str, bool]:
    """(the cell as the kernel runs it, True) after IPython's own transformation (magics,
    ``!``, ``?``); (the text itself, False) when IPython is missing or cannot transform it."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return text, False
    try:
        return TransformerManager().transform_cell(text), True
    except Exception:  # noqa: BLE001 (IPython's transformer may raise anything on bad input)
        return text, False


def _magic(node: ast.AST) -> tuple[str, str | None] | None:
    """(the magic's name when harmless, else how feedback names it; the cell body or None) of
    a ``get_ipython().<call>(...)`` as TransformerManager writes magics, ``!`` and ``?``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    owner = node.func.value
    if not (isinstance(owner, ast.Call) and _dotted(owner.func) == "get_ipython"):
        return None
    kind = node.func.attr
    if kind not in ("run_line_magic", "run_cell_magic", "system", "getoutput"):
        return None
    args = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
    name = str(args[0]) if args else "?"
    if kind == "run_cell_magic" and len(args) == 3 and isinstance(args[2], str):
        return (name if name in HARMLESS_MAGICS else f"%%{name}"), args[2]
    if kind == "run_line_magic":
        return (name if name in HARMLESS_MAGICS else f"%{name}"), None
    return f"!{name}", None


def _reach(node: ast.AST) -> str:
    """What in `node` reaches the shell ("" when nothing)."""
    if isinstance(node, ast.Import):
        roots = [a.name for a in node.names if a.name.split(".")[0] in SHELL_MODULES]
        return f"import {roots[0]}" if roots else ""
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        if module.split(".")[0] in SHELL_MODULES:
            return f"from {module} import"
        names = {f"{module}.{a.name}" for a in node.names}
        return f"from {module} import" if names & (PROCESS_CALLS | {"sys.modules"}) else ""
    if isinstance(node, ast.Name) and node.id in SHELL_NAMES:
        return node.id
    if isinstance(node, ast.Attribute):
        dotted = _dotted(node)
        if node.attr in SHELL_ATTRIBUTES | INTROSPECTION or dotted in PROCESS_CALLS | LOADERS:
            return dotted or ast.unparse(node)[:80]
    if isinstance(node, ast.Call) and _dotted(node.func) in ATTRIBUTE_CALLS:
        name = node.args[1] if len(node.args) > 1 else None
        if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
            return f"{_dotted(node.func)} with a computed name"
        if name.value in SHELL_ATTRIBUTES | INTROSPECTION:
            return f"{_dotted(node.func)}(..., {name.value!r})"
    return ""


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` for a chain of attributes on a name; "" otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])
