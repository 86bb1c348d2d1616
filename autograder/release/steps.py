"""The release steps, in the order pipeline.STEPS runs them (see pipeline.py for why).

Every step reads the course repository (config.root) and the framework's own package, and adds
bytes to the Release; none reads the clock or the environment, so releases are reproducible.
"""

from __future__ import annotations

import ast
import re
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import autograder
from autograder.github.summary import COMMENT_MARKER
from autograder.release import leaks
from autograder.release.manifest import MANIFEST_PATH, render_manifest

if TYPE_CHECKING:
    from autograder.release.pipeline import Release

#: The torch the learner workflow installs (a CPU build, from PyTorch's CPU wheel index).
TORCH_VERSION = "2.13.0"
#: Repository secret and variable the workflow reads for the hidden tests.
HIDDEN_TOKEN_SECRET = "T101_INSTRUCTOR_TOKEN"
HIDDEN_REPO_VARIABLE = "T101_INSTRUCTOR_REPO"
WORKFLOW_PATH = ".github/workflows/grade.yml"
SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}

NO_FOLDER = "The course's {what} folder {path} does not exist; the release needs it."
NOT_INSIDE = "{path} is not inside the course repository {root}; the release cannot place it."
NO_PYTEST_TABLE = (
    "{path} has no [tool.pytest.ini_options] table; the release needs one to point the "
    "learner's pytest at the visible tests."
)
UNFILLED = "The template {name} still has the placeholder {placeholder} after rendering."
COURSE_KEYS_DROPPED = ("reference_dir", "hidden_tests")
PYTEST_BLOCK = """[tool.pytest.ini_options]
# Your tests: the visible graders, run against {package_dir}.
# `pytest -m softmax` runs one component's tests (one marker per component).
testpaths = ["{visible}"]
addopts = "--strict-markers -ra"
"""


class StepError(ValueError):
    """A step refuses to go on; the message is one sentence."""


def add_stubs(release: Release) -> None:
    """The learner package, exactly as the course repository has it."""
    folder = release.config.root / release.config.course.package_dir
    _add_tree(release, folder, "package", protected=False)


def add_framework(release: Release) -> None:
    """The `autograder` package (code and templates), protected."""
    source = Path(autograder.__file__).parent
    for file in _files(source):
        relative = PurePosixPath("autograder", *file.relative_to(source).parts)
        release.add(str(relative), file.read_bytes(), protected=True)


def add_visible_graders(release: Release) -> None:
    """The visible tests, the support folder beside them and every `__init__.py` above them."""
    config = release.config
    visible = config.visible_tests
    if not visible.is_dir():
        raise StepError(NO_FOLDER.format(what="visible tests", path=visible))
    _add_tree(release, visible, "visible tests", protected=True)
    support = visible.parent / "support"
    if support.is_dir():
        _add_tree(release, support, "support", protected=True)
    for folder in _relative(release, visible).parents:
        init = config.root / folder / "__init__.py"
        if str(folder) != "." and init.is_file():
            release.add(
                str(PurePosixPath(folder) / "__init__.py"), init.read_bytes(), protected=True
            )


def add_course_file(release: Release) -> None:
    """course.toml without reference_dir and hidden_tests (instructor-only folders)."""
    keys = "|".join(COURSE_KEYS_DROPPED)
    pattern = re.compile(rf"^\s*({keys})\s*=.*\n", re.MULTILINE)
    text = pattern.sub("", release.config.path.read_text(encoding="utf-8"))
    release.add("course.toml", text.encode(), protected=True)


def add_pyproject(release: Release) -> None:
    """pyproject.toml whose [tool.pytest.ini_options] runs the visible tests."""
    path = release.config.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    match = re.search(r"^\[tool\.pytest\.ini_options\]\n(?:(?!\[).*\n)*", text, re.MULTILINE)
    if not match:
        raise StepError(NO_PYTEST_TABLE.format(path=path))
    block = PYTEST_BLOCK.format(
        package_dir=release.config.course.package_dir,
        visible=_relative(release, release.config.visible_tests),
    )
    text = text[: match.start()] + block + "\n" + text[match.end() :].lstrip("\n")
    release.add("pyproject.toml", text.encode(), protected=True)


def add_readme(release: Release) -> None:
    """README.md for the learner: what to implement, how to test, how feedback arrives."""
    config = release.config
    package_dir = PurePosixPath(config.course.package_dir)
    rows = ["| Component | File | Points | What it is |", "| --- | --- | ---: | --- |"]
    for component in config.components:
        path = str(package_dir / component.module_file)
        summary = _first_docstring_line(release.files.get(path, b""))
        rows.append(f"| {component.title} | `{path}` | {component.points:g} | {summary} |")
    values = {
        "COURSE": config.course.name,
        "PACKAGE": config.package,
        "PACKAGE_DIR": str(package_dir),
        "COMPONENTS": "\n".join(rows),
        "TOTAL": f"{sum(c.points for c in config.components):g}",
        "FIRST_COMPONENT": config.components[0].name,
        "TORCH": TORCH_VERSION,
        "PASS_RULE": _pass_rule_sentence(release),
        "NOTES": release.notes.strip() or _default_notes(release),
    }
    release.add("README.md", _render("README.md.tmpl", values).encode(), protected=False)


def add_workflow(release: Release) -> None:
    """.github/workflows/grade.yml from the template, protected."""
    values = {
        "PACKAGE_DIR": str(release.config.course.package_dir),
        "PASS_RULE": str(release.pass_rule),
        "TORCH": TORCH_VERSION,
        "SECRET": HIDDEN_TOKEN_SECRET,
        "REPO_VARIABLE": HIDDEN_REPO_VARIABLE,
        "MARKER": COMMENT_MARKER,
        "MANIFEST": MANIFEST_PATH,
    }
    release.add(WORKFLOW_PATH, _render("grade.yml.tmpl", values).encode(), protected=True)


def add_gitignore(release: Release) -> None:
    release.add(".gitignore", _render("gitignore.tmpl", {}).encode(), protected=False)


def check_no_leaks(release: Release) -> None:
    """Refuse the release if it holds a reference body, a hidden test name or a private path."""
    config = release.config
    reference = config.course.reference_dir
    hidden = config.hidden_tests
    stubs = config.root / config.course.package_dir
    bodies = leaks.reference_bodies(reference, stubs) if reference and reference.is_dir() else {}
    names = (
        leaks.hidden_names(hidden, config.visible_tests) if hidden and hidden.is_dir() else set()
    )
    private = [str(_relative(release, p)) for p in (reference, hidden) if p is not None]
    problems = leaks.find_leaks(
        release.files, bodies=bodies, secret_names=names, private_folders=private
    )
    if problems:
        raise StepError(" ".join(problems))


def add_manifest(release: Release) -> None:
    """The sha256 of every protected file, as written (so this step runs last)."""
    data = render_manifest(release.files, sorted(release.protected))
    release.add(MANIFEST_PATH, data, protected=False)


# Helpers ------------------------------------------------------------------------------------


def _files(folder: Path) -> list[Path]:
    """Regular files under folder, sorted, without caches or compiled files."""
    return sorted(
        f
        for f in folder.rglob("*")
        if f.is_file() and not SKIPPED_PARTS & set(f.parts) and f.suffix not in {".pyc", ".pyo"}
    )


def _relative(release: Release, path: Path) -> PurePosixPath:
    root = release.config.root.resolve()
    try:
        return PurePosixPath(*Path(path).resolve().relative_to(root).parts)
    except ValueError:
        raise StepError(NOT_INSIDE.format(path=path, root=root)) from None


def _add_tree(release: Release, folder: Path, what: str, *, protected: bool) -> None:
    folder = Path(folder)
    if not folder.is_dir():
        raise StepError(NO_FOLDER.format(what=what, path=folder))
    base = _relative(release, folder)
    for file in _files(folder):
        relative = base / PurePosixPath(*file.relative_to(folder).parts)
        release.add(str(relative), file.read_bytes(), protected=protected)


def _render(name: str, values: dict[str, str]) -> str:
    text = (resources.files("autograder") / "templates" / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"@@{key}@@", value)
    left = re.search(r"@@[A-Z_]+@@", text)
    if left:
        raise StepError(UNFILLED.format(name=name, placeholder=left.group(0)))
    return text


def _first_docstring_line(source: bytes) -> str:
    try:
        doc = ast.get_docstring(ast.parse(source.decode("utf-8"))) or ""
    except (SyntaxError, UnicodeDecodeError):
        return ""
    return doc.strip().split("\n", 1)[0].replace("|", "\\|")


def _pass_rule_sentence(release: Release) -> str:
    rule = release.pass_rule
    if rule.min_score is None:
        return "the check passes when every visible (and, if configured, hidden) test passes"
    return f"the check passes when your total reaches {rule.min_score:g} points"


def _default_notes(release: Release) -> str:
    return (
        "Each file's docstrings are the full specification: shapes, the symbols used, and what "
        "to raise when an input is wrong. The course notes of the class that introduced each "
        "component explain the idea behind it; read them before you start the component, and "
        "again when a test's message names a mistake you do not understand."
    )
