"""A grader folder or reference module that course.toml configures but the course lacks (a typo
in reference_dir, a deleted reference module, a missing hidden_tests folder) is refused before
anything is graded: exit status 2, one sentence naming the key and the path, no gradebook.
Grading the visible tests only (a learner's release, --visible-only) does not ask for them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import cli
from autograder.commands import grade as grade_command
from autograder.grading.package_dir import (
    NO_HIDDEN_TESTS,
    NO_REFERENCE_DIR,
    NO_REFERENCE_INIT,
    NO_REFERENCE_MODULE,
)
from tests.batch.conftest import TOY, run_cli


def _typo_in_reference_dir(course: Path) -> str:
    toml = course / "course.toml"
    toml.write_text(toml.read_text().replace('"solution/toypkg"', '"solution/toypkg-typo"'))
    return NO_REFERENCE_DIR.format(path=course / "solution" / "toypkg-typo", course=toml)


def _reference_without_init(course: Path) -> str:
    (course / "solution" / "toypkg" / "__init__.py").unlink()
    path = course / "solution" / "toypkg"
    return NO_REFERENCE_INIT.format(path=path, course=course / "course.toml")


def _reference_module_deleted(course: Path) -> str:
    module = course / "solution" / "toypkg" / "normalize.py"
    module.unlink()
    return NO_REFERENCE_MODULE.format(path=module, name="normalize", course=course / "course.toml")


def _hidden_tests_missing(course: Path) -> str:
    shutil.rmtree(course / "tests" / "graders" / "hidden")
    hidden = course / "tests" / "graders" / "hidden"
    return NO_HIDDEN_TESTS.format(path=hidden, course=course / "course.toml")


BREAKS = [
    _typo_in_reference_dir,
    _reference_without_init,
    _reference_module_deleted,
    _hidden_tests_missing,
]
IDS = ["reference-dir-typo", "reference-no-init", "reference-module-deleted", "hidden-missing"]


@pytest.fixture
def course(tmp_path: Path) -> Path:
    copy = tmp_path / "course"
    shutil.copytree(TOY, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy.resolve()


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("breaks", BREAKS, ids=IDS)
def test_grade_class_refuses_a_course_missing_grader_files(course: Path, tmp_path: Path, breaks):
    sentence = breaks(course)
    roster = tmp_path / "roster"
    roster.mkdir()
    shutil.copytree(TOY / "solution", roster / "perfect" / "toypkg")
    out = tmp_path / "out"
    result = invoke(
        "grade-class", str(roster), "--out", str(out), "--course", str(course / "course.toml"),
        "-q",
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.strip() == sentence
    assert not (out / "gradebook.csv").exists()
    assert not (out / "perfect").exists()


@pytest.mark.parametrize("breaks", BREAKS, ids=IDS)
def test_grade_with_hidden_tests_refuses_a_course_missing_grader_files(
    course: Path, tmp_path: Path, breaks
):
    sentence = breaks(course)
    out = tmp_path / "out"
    result = invoke(
        "grade", str(TOY / "solution"), "--course", str(course / "course.toml"),
        "--out", str(out), "--quiet",
    )  # fmt: skip
    assert result.exit_code == 2
    reason = grade_command.NOT_GRADED.format(name="solution", reason=sentence)
    assert result.stderr.strip() == reason
    assert not (out / "results.json").exists()


@pytest.mark.parametrize("breaks", BREAKS, ids=IDS)
def test_grading_visible_tests_only_needs_no_hidden_files(course: Path, tmp_path: Path, breaks):
    breaks(course)
    out = tmp_path / "out"
    done = run_cli(
        "grade", str(TOY / "solution"), "--course", str(course / "course.toml"),
        "--out", str(out), "--quiet", "--visible-only", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (out / "results.json").is_file()
