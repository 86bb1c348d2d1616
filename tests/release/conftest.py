"""Shared fixtures: one release of this course repository, built once per test session."""

from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.release.pipeline import build_release, write_release
from autograder.results.pass_rule import PassRule

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def course():
    return load_course(ROOT / "course.toml")


@pytest.fixture(scope="session")
def release_dir(course, tmp_path_factory):
    """The learner release of this repository, written to a fresh folder."""
    out = tmp_path_factory.mktemp("release") / "learner"
    write_release(build_release(course, pass_rule=PassRule.parse("all")), out)
    return out
