"""What `autograder release` writes for this course, and what it must never write."""

import ast
import hashlib
import json
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import cli
from autograder.config import load_course
from autograder.release import steps
from autograder.release.manifest import MANIFEST_PATH, compare_manifest
from autograder.release.pipeline import (
    FIXED_MTIME,
    OUT_NOT_EMPTY,
    ReleaseError,
    build_release,
    write_release,
)
from autograder.release.pyproject import learner_pyproject
from autograder.release.stable_softmax import stable_softmaxes
from autograder.results.pass_rule import PassRule

from .conftest import ROOT

PRIVATE = (
    "solutions/",
    "tests/graders/hidden/",
    "tests/reference/",
    "examples/",
    "tests/framework",
)


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder).as_posix()): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _bodies(source: str) -> set[str]:
    """ast dumps of every function body (docstring removed) in source."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            if body:
                found.add(ast.dump(ast.Module(body=body, type_ignores=[])))
    return found


def test_release_has_the_learner_repository_layout(release_dir):
    files = _files(release_dir)
    for expected in [
        "README.md",
        "course.toml",
        "pyproject.toml",
        ".gitignore",
        ".github/workflows/grade.yml",
        MANIFEST_PATH,
        "assignments/t101/softmax.py",
        "autograder/cli/__init__.py",
        "autograder/templates/grade.yml.tmpl",
        "tests/__init__.py",
        "tests/graders/__init__.py",
        "tests/graders/visible/test_softmax.py",
        "tests/graders/support/inputs.py",
    ]:
        assert expected in files, expected
    assert not [p for p in files if p.startswith(PRIVATE)]
    assert not [p for p in files if "__pycache__" in p or p.endswith(".pyc")]


def test_stubs_are_copied_unchanged(release_dir):
    for stub in (ROOT / "assignments/t101").glob("*.py"):
        assert (release_dir / "assignments/t101" / stub.name).read_bytes() == stub.read_bytes()


def test_no_release_file_contains_a_reference_body(release_dir):
    stub_bodies = set()
    for stub in (ROOT / "assignments/t101").glob("*.py"):
        stub_bodies |= _bodies(stub.read_text())
    reference = set()
    for file in (ROOT / "solutions/t101").glob("*.py"):
        reference |= _bodies(file.read_text()) - stub_bodies
    assert len(reference) > 10  # the references really were read
    for path, data in _files(release_dir).items():
        if path.endswith(".py"):
            assert not _bodies(data.decode()) & reference, path


def test_no_release_file_names_a_hidden_test(release_dir):
    def names(folder):
        found = set()
        for file in folder.glob("test_*.py"):
            found.add(file.stem)
            found |= set(re.findall(r"def (test_\w+)", file.read_text()))
        return found

    secret = names(ROOT / "tests/graders/hidden") - names(ROOT / "tests/graders/visible")
    assert len(secret) > 10
    pattern = re.compile(r"\b(" + "|".join(sorted(secret)) + r")\b")
    for path, data in _files(release_dir).items():
        found = pattern.search(data.decode("utf-8", errors="replace"))
        assert found is None, f"{path} names the hidden test {found.group(1)}"


def test_course_file_loads_without_instructor_only_folders(release_dir):
    text = (release_dir / "course.toml").read_text()
    assert "reference_dir" not in text and "hidden_tests" not in text
    assert "standins" not in text  # the course's stand-ins stay with the instructor
    config = load_course(release_dir / "course.toml")
    assert config.hidden_tests is None and config.course.reference_dir is None
    assert config.course.standins is None
    assert config.visible_tests == (release_dir / "tests/graders/visible").resolve()
    assert [c.name for c in config.components] == [
        c.name for c in load_course(ROOT / "course.toml").components
    ]


def test_pyproject_runs_the_visible_tests(release_dir):
    data = tomllib.loads((release_dir / "pyproject.toml").read_text())
    assert data["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests/graders/visible"]
    assert data["project"]["scripts"]["autograder"] == "autograder.cli:cli"


def test_pyproject_installs_as_the_course_one_without_instructor_matter(release_dir):
    text = (release_dir / "pyproject.toml").read_text()
    data = tomllib.loads(text)
    course = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for key in ("build-system",):
        assert data[key] == course[key]
    assert data["tool"]["setuptools"] == course["tool"]["setuptools"]
    learner_project = dict(course["project"])
    del learner_project["optional-dependencies"]  # no extra without --notebook
    assert data["project"] == learner_project
    assert set(data["tool"]) == {"setuptools", "pytest"}
    comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
    assert comments == [
        "# Your tests: the visible graders, run against assignments/t101.",
        "# `pytest -m softmax` runs one component's tests (one marker per component).",
    ]
    for word in ("solutions", "examples/submissions", "hostile", "bench", "glove", "ruff"):
        assert word not in text


def test_pyproject_keeps_only_the_learner_extras_and_no_array_table():
    course = (
        "[project]\nname = 'c'\n# instructor note\n\n[project.optional-dependencies]\n"
        "bench = ['x']\nnotebook = ['nbgrader>=0.9']\n\n[[tool.mypy.overrides]]\nmodule = 'a'\n"
        "\n[tool.pytest.ini_options]\naddopts = '-q'\n"
    )
    block = '[tool.pytest.ini_options]\ntestpaths = ["t"]\n'
    data = tomllib.loads(learner_pyproject(course, pytest_block=block, extras=("notebook",)))
    assert data == {
        "project": {"name": "c", "optional-dependencies": {"notebook": ["nbgrader>=0.9"]}},
        "tool": {"pytest": {"ini_options": {"testpaths": ["t"]}}},
    }
    assert "optional" not in learner_pyproject(course, pytest_block=block)


def test_readme_says_what_to_implement_and_how_feedback_arrives(release_dir, course):
    readme = (release_dir / "README.md").read_text()
    for component in course.components:
        assert f"`assignments/t101/{component.module_file}`" in readme
        assert component.title in readme
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in readme
    assert "pytest -m softmax" in readme and "autograder grade ." in readme
    commands = [line for line in readme.splitlines() if line.startswith(("pytest", "autograder"))]
    assert len(commands) == 4 and len({line.index("  # ") for line in commands}) == 1
    assert "one line per test" not in commands[0]  # addopts has no -v: one character per test
    assert "Where the course notes help" in readme and "@@" not in readme


def test_manifest_hashes_every_protected_file(release_dir):
    manifest = json.loads((release_dir / MANIFEST_PATH).read_text())
    protected = manifest["protected"]
    assert ".github/workflows/grade.yml" in protected
    assert "course.toml" in protected and "tests/graders/visible/test_softmax.py" in protected
    assert not [p for p in protected if p.startswith("assignments/") or p == "README.md"]
    for path, digest in protected.items():
        assert hashlib.sha256((release_dir / path).read_bytes()).hexdigest() == digest
    assert compare_manifest(release_dir / MANIFEST_PATH, release_dir) == []


def test_manifest_reports_changed_and_deleted_files(release_dir, tmp_path):
    copy = tmp_path / "copy"
    for path, data in _files(release_dir).items():
        (copy / path).parent.mkdir(parents=True, exist_ok=True)
        (copy / path).write_bytes(data)
    (copy / "tests/graders/visible/test_softmax.py").write_text("def test_nothing(): pass\n")
    (copy / ".github/workflows/grade.yml").unlink()
    (copy / "assignments/t101/softmax.py").write_text("# the learner's own work\n")
    changes = compare_manifest(copy / MANIFEST_PATH, copy)
    assert [(c.path, c.got) for c in changes] == [
        (".github/workflows/grade.yml", "missing"),
        ("tests/graders/visible/test_softmax.py", changes[1].got),
    ]
    assert changes[0].sentence == ".github/workflows/grade.yml was deleted or moved."
    assert "was changed" in changes[1].sentence


def test_two_releases_are_byte_identical(release_dir, course, tmp_path):
    again = tmp_path / "again"
    write_release(build_release(course, pass_rule=PassRule.parse("all")), again)
    assert _files(again) == _files(release_dir)
    for path in [again / "README.md", again / "autograder", again]:
        assert path.stat().st_mtime == FIXED_MTIME


def test_release_refuses_a_folder_that_is_not_empty(course, tmp_path):
    (tmp_path / "old.txt").write_text("old")
    with pytest.raises(ReleaseError) as error:
        write_release(build_release(course, pass_rule=PassRule()), tmp_path)
    assert str(error.value) == OUT_NOT_EMPTY.format(path=tmp_path)


def test_cli_release_writes_and_reports(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "learner"
    result = CliRunner().invoke(cli, ["release", "--out", str(out), "--pass-rule", "min_score:70"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Wrote the learner release (")
    assert 'PASS_RULE: "min_score:70"' in (out / ".github/workflows/grade.yml").read_text()
    bad = CliRunner().invoke(cli, ["release", "--out", str(tmp_path / "x"), "--pass-rule", "most"])
    assert bad.exit_code == 2 and "is not one the grader knows" in bad.output


def test_notebook_step_adds_nbgraders_learner_notebook(course, monkeypatch):
    """--notebook: the step places what generate_learner_notebook writes (nbgrader is slow and
    optional, so a stand-in writes it here); the notebook is the learner's, its data protected."""
    import autograder.notebook

    calls = []

    def fake_generate(dest, *, assignment, grader_only=()):
        calls.append(assignment.assignment)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text('{"cells": []}\n')
        (dest.parent / "toy_vectors.txt").write_text("1 2 3\n")
        return [dest, dest.parent / "toy_vectors.txt"]

    monkeypatch.setattr(autograder.notebook, "generate_learner_notebook", fake_generate)
    release = build_release(course, pass_rule=PassRule(), notebook=True)
    assert calls == ["contextual_vectors"]
    notebook = "assignments/notebooks/contextual_vectors.ipynb"
    assert release.files[notebook] == b'{"cells": []}\n'
    assert notebook not in release.protected
    assert "assignments/notebooks/toy_vectors.txt" in release.protected
    # The learner's own nbgrader folder: `autograder grade .` grades the notebook too, its
    # source being the learner's notebook itself; the grader-only data is there, protected.
    source = "notebooks/source/contextual_vectors/"
    assert release.files[source + "contextual_vectors.ipynb"] == b'{"cells": []}\n'
    for path in ("notebooks/nbgrader_config.py", source + "toy_vectors.txt"):
        assert path in release.protected
    plain = build_release(course, pass_rule=PassRule())
    assert not [p for p in plain.files if p.startswith(("assignments/notebooks/", "notebooks/"))]


def test_a_shipped_notebook_is_in_the_readme_and_its_extras_in_the_workflow(course, monkeypatch):
    """The learner reads where the notebook is, its points, how to install what it needs and how
    it is graded; the workflow, which grades it with the learner's own nbgrader folder, installs
    its extras. Without --notebook neither says a word of it."""
    import autograder.notebook

    def fake_generate(dest, *, assignment, grader_only=()):
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text('{"cells": []}\n')
        return [dest]

    monkeypatch.setattr(autograder.notebook, "generate_learner_notebook", fake_generate)
    shipped = build_release(course, pass_rule=PassRule(), notebook=True)
    readme = shipped.files["README.md"].decode()
    assert (
        "* `assignments/notebooks/contextual_vectors.ipynb` (Notebook: contextual vectors): "
        "20 points from its autograded cells, on top of the modules' 100 (out of 120 with the "
        "notebook). Its written answer, 5 points, is graded by hand by your instructor: your "
        "grade shows it as pending, apart from that total, until then." in readme
    )
    assert 'python -m pip install -e ".[notebook,glove]"' in readme
    assert (
        "nbgrader validate assignments/notebooks/contextual_vectors.ipynb   # runs it and lists "
        "each failing test cell" in readme
    )
    assert "`nbgrader validate` also reports a test cell that printed a warning as failed" in readme
    # The learner's workflow grades the notebook too, with its visible tests (the learner's own
    # nbgrader folder), on GloVe: the issue was CI grading on the toy vectors.
    workflow = shipped.files[steps.WORKFLOW_PATH].decode()
    assert 'python -m pip install ".[notebook,glove]"\n' in workflow

    plain = build_release(course, pass_rule=PassRule())
    assert "notebook" not in plain.files["README.md"].decode().lower()
    assert "python -m pip install .\n" in plain.files[steps.WORKFLOW_PATH].decode()


def test_the_release_holds_no_stand_in_and_no_stable_softmax(release_dir):
    """The course's stand-ins (a known-good softmax among them) never ship; nor does any
    complete, numerically stable softmax, wherever it sits (the framework once shipped one)."""
    files = _files(release_dir)
    assert "solutions/standins.py" not in files
    standins = _bodies((ROOT / "solutions/standins.py").read_text())
    for path, data in files.items():
        if path.endswith(".py"):
            text = data.decode("utf-8")
            assert not _bodies(text) & standins, f"{path} holds a stand-in's body"
            assert stable_softmaxes(text) == [], path
