"""Imports of modules the static check never read: code written while the learner's code runs.

The check reads the package's source files as submitted, and the worker gets no compiled module
(runtime/harness/private_copy.py). A module of the package that no file is, or a top-level
module that is neither the package nor installed, can only be one learner code writes while it
runs (`_gen.py` written beside `attention.py`, then `from . import _gen`, or
`importlib.import_module("t101._gen")`) or puts on the import path: its code would run unread.
Each such import is a finding for review, as a dynamic reach the check cannot follow is.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import sys

from autograder.static_check.resolve import Resolver, fold
from autograder.static_check.scan import REVIEW, Finding
from autograder.static_check.watched_names import IMPORTERS

#: The spellings of a call that imports a module by name.
IMPORTED_BY = frozenset({"import_module", "__import__"})


def unread_imports(
    package: str, trees: dict[str, ast.Module], resolvers: dict[str, Resolver]
) -> list[Finding]:
    """A REVIEW finding for each import, anywhere in a readable module, of a module the
    package holds no source of (``trees``: the parsed files by path; ``resolvers`` by path)."""
    held = _held_modules(resolver.module for resolver in resolvers.values())
    bound = {r.module: _bound_names(trees[path]) for path, r in resolvers.items()}
    findings = []
    for path, resolver in resolvers.items():
        for node in ast.walk(trees[path]):
            for name in _unread(node, package, resolver, held, bound):
                finding = Finding(REVIEW, name, "", path, node.lineno, resolver.module)
                if finding not in findings:
                    findings.append(finding)
    return findings


def _held_modules(modules) -> frozenset[str]:
    """The modules the package's files are, and every package above each (a folder without
    an ``__init__.py`` is a namespace package)."""
    held = set()
    for module in modules:
        parts = module.split(".")
        held |= {".".join(parts[:end]) for end in range(1, len(parts) + 1)}
    return frozenset(held)


def _unread(
    node: ast.AST, package: str, resolver: Resolver, held: frozenset[str], bound: dict
) -> list[str]:
    """The modules ``node`` (when an import statement) imports that no source of the package
    is: of the package and not held, or top-level and not installed."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = resolver.absolute(node.module or "", node.level)
        names = [base]
        if base in held:  # `from t101 import x`: x is a module only when no name x is bound
            names += [
                f"{base}.{alias.name}"
                for alias in node.names
                if alias.name != "*" and not _binds(bound.get(base, frozenset()), alias.name)
            ]
    elif isinstance(node, ast.Call) and node.args and _imports(node.func, resolver):
        built = fold(node.args[0])  # a name no literal makes is flagged by the scan
        if built is None:
            return []
        rest = built.lstrip(".")
        names = [resolver.absolute(rest, len(built) - len(rest))]
    else:
        return []
    return [name for name in names if not _readable(name, package, held)]


def _imports(func: ast.expr, resolver: Resolver) -> bool:
    """Whether a call of ``func`` imports a module by name (importlib.import_module,
    __import__): by its spelling, or by what the module bound its name to (no step of the
    check's budget is spent: the scan follows the rest)."""
    if isinstance(func, ast.Attribute):
        return func.attr in IMPORTED_BY
    if isinstance(func, ast.Name):
        return func.id in IMPORTED_BY or bool(resolver.bindings.get(func.id, set()) & IMPORTERS)
    return False


def _bound_names(tree: ast.Module) -> frozenset[str] | None:
    """The names a module binds at its top level (assigned, defined, imported, in any block
    but a function's or a class's) and never deletes; None when it star-imports (it may bind
    any)."""
    names, deleted, pending = set(), set(), list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            continue  # what its body binds is its own
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return None
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
            deleted.add(node.id)
        pending.extend(ast.iter_child_nodes(node))
    return frozenset(names - deleted)


def _binds(names: frozenset[str] | None, name: str) -> bool:
    """Whether a module of the package (the names it binds) may bind ``name``."""
    return names is None or name in names


def _readable(name: str, package: str, held: frozenset[str]) -> bool:
    root = name.split(".")[0]
    if root == package:
        return name in held
    return _installed(root)


@functools.lru_cache(maxsize=1024)
def _installed(root: str) -> bool:
    """Whether Python finds the top-level module ``root`` (a search of the import path: no
    code of it runs)."""
    if not root or root in sys.builtin_module_names:
        return True
    try:
        return importlib.util.find_spec(root) is not None
    except (ImportError, ValueError):
        return False
