"""The framework's shape: no import cycle, one name per module, pytest through its public API, and
the sizes of the style: no module over 400 lines, no function over 60 (all of the project's Python).

They read the source of autograder/ (never import it): a cycle is a pair of modules each of
which needs the other at import time (imports inside functions, and those only for type
checkers, do not count); a private use of pytest is a name pytest keeps to itself
(`_pytest`, or an attribute with a leading underscore of pytest's objects).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "autograder"
PRIVATE_PYTEST = re.compile(
    r"\b(_repr_failure_py|_get_teardown_reports|_setupstate|_report_sections|_session_start"
    r"|_initrequest|_fixturemanager|from _pytest|import _pytest)\b"
    r"|\.gethookproxy\s*=|item\._request\b"
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _known_modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported_at_import_time(
    tree: ast.Module, name: str, known: dict[str, Path], is_package: bool = False
) -> set[str]:
    """The framework's modules a module imports when it is imported (with their packages,
    but for its own)."""
    found: set[str] = set()
    for node in _module_level(tree.body):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package (a package's own __init__)
                package = name.split(".") if is_package else name.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            for end in range(1, len(parts) + 1):
                candidate = ".".join(parts[:end])
                # A module's own packages are imported before it, whatever it imports.
                if candidate in known and not f"{name}.".startswith(f"{candidate}."):
                    found.add(candidate)
    return found


def _module_level(body: list[ast.stmt]):
    """The statements run when a module is imported: its body and the blocks of its module-level
    if/try/with statements, but not `if TYPE_CHECKING:` blocks, nor functions and classes."""
    for node in body:
        if isinstance(node, ast.If):
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level(block)
            for handler in node.handlers:
                yield from _module_level(handler.body)
        elif isinstance(node, ast.With):
            yield from _module_level(node.body)
        else:
            yield node


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_two_modules_of_the_framework_import_each_other_at_import_time():
    known = _known_modules()
    graph = {
        name: _imported_at_import_time(
            ast.parse(path.read_text(encoding="utf-8")), name, known, path.name == "__init__.py"
        )
        for name, path in known.items()
    }
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_package():
    graph = {"a": {"a.b"}, "a.b": {"c"}, "c": {"a"}, "d": {"c"}}
    assert _cycles(graph) == [["a", "a.b", "c"]]


def test_the_framework_uses_no_private_name_of_pytest():
    uses = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE_PYTEST.search(line)
    ]
    assert uses == []


def test_no_two_modules_of_the_framework_share_a_name():
    """One name per concept: a module's file name says which one (__init__ and __main__
    aside)."""
    seen: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(path.name, []).append(str(path.relative_to(PACKAGE.parent)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


SIZED = ("autograder", "tests", "benchmarks", "solutions")  # the project's own Python
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 400, 60


def _too_long(path: Path, root: Path) -> list[str]:
    """`path` (named from root) and each of its functions if longer than the style allows."""
    text = path.read_text(encoding="utf-8")
    where = path.relative_to(root)
    found = []
    if len(text.splitlines()) > MAX_MODULE_LINES:
        found.append(f"{where}: {len(text.splitlines())} lines")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{where}:{node.lineno}: {node.name} is {length} lines")
    return found


def test_no_module_over_400_lines_and_no_function_over_60():
    """The style's sizes, in the framework, the tests, the benchmarks and the course's own code
    (a function's decorators aside)."""
    root = PACKAGE.parent
    files = sorted(path for folder in SIZED for path in (root / folder).rglob("*.py"))
    assert len(files) > 300  # the folders were read
    assert [found for path in files for found in _too_long(path, root)] == []


def test_the_size_check_finds_a_long_module_and_a_long_function(tmp_path):
    module = tmp_path / "long.py"
    module.write_text("def f():\n" + "    x = 1\n" * 60 + "\n" * 340, encoding="utf-8")
    assert _too_long(module, tmp_path) == ["long.py: 401 lines", "long.py:1: f is 61 lines"]
    module.write_text("def f():\n" + "    x = 1\n" * 59 + "\n" * 340, encoding="utf-8")
    assert _too_long(module, tmp_path) == []
