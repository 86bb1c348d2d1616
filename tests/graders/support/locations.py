"""Where a known mistake can be fixed: the learner's own line (the scaling, the reshape, the mask
fill), found in their source with `ast`, here in the harness (the text is parsed, never run).

A failure that names a catalogued mistake gets, after the mistake's explanation, "Look at
assignments/t101/attention.py:49, the line that scales the scores." (feedback.locating; the
autouse fixture `learner_lines` sets it for every grader test, visible or hidden: the line is
the learner's own, and says nothing of a hidden test's inputs). Only what the source shows is
said: a mistake whose line cannot be told (its code is elsewhere, or written another way) gets
no place, never a guess.

Each mistake's `Place` (support.mistake_places; support.source_nodes) names a module, the
scopes to search in order (a function, a class: all its methods, or `Class.method`), what to look
for (a test on one `ast` node) and how to say it. A scope whose call the message names
(`SelfAttention(8, 4, 6)(x)`) is searched first. The source is read without following a link out
of the package (autograder.learner_files).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import pytest

from autograder.feedback import locating
from autograder.learner_files import TooLarge, read_file
from tests.graders.support.mistake_places import PLACES
from tests.graders.support.source_nodes import Place, Test

WHERE = "Look at {path}:{line}, {what}."
MAX_SOURCE_BYTES = 1 << 20  # a module larger than this gets no place


@lru_cache(maxsize=64)
def _tree(source: bytes) -> ast.Module | None:
    try:
        return ast.parse(source.decode("utf-8"))
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None


def _source(package_dir: Path, module: str) -> bytes | None:
    """The learner's `<module>.py`, read without following a link out of the package
    (learner_files); None when it cannot be read as a regular file of the package."""
    try:
        return read_file(package_dir, f"{module}.py", max_bytes=MAX_SOURCE_BYTES)
    except (OSError, TooLarge):  # LinkRefused is an OSError
        return None


def _scopes(tree: ast.Module, scope: str) -> Iterator[ast.AST]:
    """The definitions `scope` names: a top-level function or class, or `Class.method`."""
    head, _, method = scope.partition(".")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == head:
            if not method:
                yield node
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == method:
                        yield item


def _lines(scope: ast.AST, test: Test) -> list[int]:
    """The lines of the nodes in scope (its docstrings and def lines aside) that pass test."""
    found = []
    for node in ast.walk(scope):
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.arguments | ast.arg):
            continue
        if getattr(node, "lineno", None) is None:
            continue
        try:
            hit = test(node)
        except Exception:  # a test on an unusual node: no place, never a grader error
            hit = False
        if hit:
            found.append(node.lineno)
    return sorted(found)


def _referenced(tree: ast.Module, scope: ast.AST) -> list[ast.AST]:
    """The module's own functions and classes that `scope` names (a helper it calls, a class
    it builds: the Annotated Transformer's `attention(...)`, a LayerNorm class of one's own),
    in the order it first names them."""
    defined = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node is not scope
    }
    found: dict[str, ast.AST] = {}
    for node in ast.walk(scope):
        name = node.id if isinstance(node, ast.Name) else ""
        if name in defined and name not in found:
            found[name] = defined[name]
    return list(found.values())


def _line(tree: ast.Module, place: Place, message: str) -> int | None:
    """The line of the first (or last) node passing place.test in the scopes the message
    names (`SelfAttention(8, 4, 6)(x)`: SelfAttention), or in all place.scopes in order when it
    names none; each scope's own module-level helpers after it."""
    named = [s for s in place.scopes if f"{s.partition('.')[0]}(" in message]
    for scope_name in named or place.scopes:
        for scope in _scopes(tree, scope_name):
            for searched in (scope, *_referenced(tree, scope)):
                lines = _lines(searched, place.test)
                if lines:
                    return lines[-1] if place.last else lines[0]
    return None


def uses_module(tree: ast.Module, module: str, package: str) -> bool:
    """Whether the module `tree` calls something it imports from `package`'s `module`
    (`from .softmax import softmax` then `softmax(...)`, `from . import softmax` then
    `softmax.softmax(...)`): an attention that imports the package's softmax but calls
    scipy's does not use it."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if source == module and node.level or source == f"{package}.{module}":
                bound |= {alias.asname or alias.name for alias in node.names}
            elif node.level and not source or source == package:
                bound |= {
                    alias.asname or alias.name for alias in node.names if alias.name == module
                }
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == f"{package}.{module}":
                    bound.add(alias.asname or package)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        while isinstance(func, ast.Attribute):
            func = func.value
        if isinstance(func, ast.Name) and func.id in bound:
            return True
    return False


def place_of(
    mistake_id: str, message: str, package_dir: Path, shown_dir: str, tested: str | None = None
) -> str | None:
    """WHERE for a named mistake in the learner's package, or None when its line cannot be
    told from the source. `tested`: the module of the component under test; a mistake of
    another module (softmax/nan-all-inf in an attention test) gets a place only when the
    tested module calls that module's code, since the mistake may be in what it calls instead
    (scipy's softmax gives NaN on an all -inf row too)."""
    place = PLACES.get(mistake_id)
    if place is None:
        return None
    if tested is not None and tested != place.module:
        tested_source = _source(Path(package_dir), tested)
        tested_tree = _tree(tested_source) if tested_source is not None else None
        package = Path(package_dir).name
        if tested_tree is None or not uses_module(tested_tree, place.module, package):
            return None
    source = _source(Path(package_dir), place.module)
    tree = _tree(source) if source is not None else None
    line = _line(tree, place, message) if tree is not None else None
    if line is None:
        return None
    shown = f"{shown_dir.rstrip('/')}/{place.module}.py"
    return WHERE.format(path=shown, line=line, what=place.what)


@pytest.fixture(autouse=True)
def learner_lines(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every grader test: a named mistake points to the learner's line (module docstring)."""
    if "learner" not in request.fixturenames:
        yield
        return
    learner = request.getfixturevalue("learner")
    package_dir, shown = learner.package_dir, learner.display_dir
    modules = {place.module for place in PLACES.values()}
    tested = next((m.name for m in request.node.iter_markers() if m.name in modules), None)

    def locate(mistake_id: str, message: str) -> str | None:
        return place_of(mistake_id, message, package_dir, shown, tested)

    with locating(locate):
        yield
