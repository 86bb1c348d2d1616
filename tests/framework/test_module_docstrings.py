"""Module docstrings a newcomer reads at a glance: one standalone first line, then brief.

Every module of the framework opens with a docstring whose first line stands alone. Every module
of the project (framework, course, tests, benchmarks) keeps its docstring to at most 20 lines and
no paragraph or bullet over 100 words; the how and why go to the docs (docs/internals/).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import autograder

ROOT = Path(autograder.__file__).parent
PROJECT = ROOT.parent
MODULES = sorted(p for p in ROOT.rglob("*.py") if p.read_text().strip())
#: The project's own Python, learners' copies (examples/submissions) and stubs aside.
PROJECT_MODULES = sorted(
    p
    for folder in ("autograder", "solutions", "tests", "benchmarks")
    for p in (PROJECT / folder).rglob("*.py")
    if p.read_text().strip() and ".venv" not in p.parts
)
MAX_LINES, MAX_WORDS = 20, 100
BULLET = re.compile(r"^\s*(?:[-*]|\d+[.)])\s")


def paragraphs(docstring: str) -> list[str]:
    """The paragraphs of ``docstring``: runs of lines between blank lines, a bullet each."""
    found: list[list[str]] = []
    for line in docstring.splitlines():
        if not line.strip():
            found.append([])
        elif BULLET.match(line) or not found:
            found.append([line])
        else:
            found[-1].append(line)
    return [" ".join(block) for block in found if block]


def module_docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text()), clean=False) or ""


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_docstring_opens_with_one_line(path: Path) -> None:
    docstring = module_docstring(path)
    assert docstring, f"{path} has no module docstring"
    lines = docstring.strip("\n").splitlines()
    assert len(lines[0]) <= 100, f"{path}: the first line is {len(lines[0])} characters"
    assert len(lines) == 1 or not lines[1].strip(), (
        f"{path}: the first line runs on into the second; end it and leave a blank line"
    )


@pytest.mark.parametrize("path", PROJECT_MODULES, ids=lambda p: str(p.relative_to(PROJECT)))
def test_a_module_docstring_is_brief(path: Path) -> None:
    docstring = module_docstring(path)
    lines = len(docstring.strip("\n").splitlines())
    assert lines <= MAX_LINES, (
        f"{path}: the module docstring is {lines} lines; keep it to {MAX_LINES} and move the "
        "how and why to the docs (docs/internals/)"
    )
    for paragraph in paragraphs(docstring):
        words = len(paragraph.split())
        assert words <= MAX_WORDS, (
            f"{path}: a paragraph of the module docstring is {words} words (at most "
            f"{MAX_WORDS}): {paragraph[:60]!r}..."
        )


def test_paragraphs_split_at_blank_lines_and_bullets() -> None:
    text = "One line.\n\nA paragraph\nof two lines.\n- a bullet\n  continued\n- another\n"
    assert paragraphs(text) == [
        "One line.",
        "A paragraph of two lines.",
        "- a bullet   continued",
        "- another",
    ]
