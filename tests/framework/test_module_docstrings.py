"""Every module of the framework opens with a docstring whose first line stands alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import autograder

ROOT = Path(autograder.__file__).parent
MODULES = sorted(p for p in ROOT.rglob("*.py") if p.read_text().strip())


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_docstring_opens_with_one_line(path: Path) -> None:
    docstring = ast.get_docstring(ast.parse(path.read_text()), clean=False)
    assert docstring, f"{path} has no module docstring"
    lines = docstring.strip("\n").splitlines()
    assert len(lines[0]) <= 100, f"{path}: the first line is {len(lines[0])} characters"
    assert len(lines) == 1 or not lines[1].strip(), (
        f"{path}: the first line runs on into the second; end it and leave a blank line"
    )
