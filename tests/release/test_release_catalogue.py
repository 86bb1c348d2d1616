"""The known-mistakes catalogue ships with the learner release, protected; the mutants and the
variants (edits of the references) never do, and course.toml loses the keys naming them."""

import json
import shutil
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.mistakes import course_catalogue
from autograder.release import steps
from autograder.release.leaks import PRIVATE_PATH
from autograder.release.manifest import MANIFEST_PATH
from autograder.release.pipeline import STEPS, ReleaseError, build_release
from autograder.results.pass_rule import PassRule

from .conftest import ROOT

TOY = ROOT / "tests/framework/toy_course"


def toy_course(tmp_path: Path) -> Path:
    """A copy of the toy course with the pyproject.toml a release needs; its course.toml."""
    course = tmp_path / "toy"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__", "submissions"))
    (course / "pyproject.toml").write_text(
        '[project]\nname = "toy"\nversion = "0"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    return course / "course.toml"


def _release_files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_catalogue_ships_byte_for_byte_and_protected(release_dir, course):
    folder = course.course.mistakes
    shipped = sorted(p.name for p in folder.glob("*.toml"))
    assert "attention.toml" in shipped
    protected = json.loads((release_dir / MANIFEST_PATH).read_text())["protected"]
    for name in shipped:
        path = f"mistakes/{name}"
        assert (release_dir / path).read_bytes() == (folder / name).read_bytes()
        assert path in protected


def test_mutants_and_variants_never_ship(release_dir, course):
    files = _release_files(release_dir)
    for folder in (course.course.mutants, course.course.variants):
        relative = folder.relative_to(ROOT).as_posix()
        assert not [f for f in files if f.startswith(relative + "/")]
    for mutants_file in course.course.mutants.glob("*.toml"):
        assert mutants_file.read_bytes() not in {
            (release_dir / f).read_bytes() for f in files if f.endswith(".toml")
        }


def test_released_course_file_keeps_the_catalogue_and_drops_mutants_and_variants(release_dir):
    text = (release_dir / "course.toml").read_text()
    assert "\nvariants" not in text and "\nmutants" not in text
    config = load_course(release_dir / "course.toml")
    assert config.course.mutants is None and config.course.variants is None
    assert config.course.mistakes == (release_dir / "mistakes").resolve()
    ours = course_catalogue(load_course(ROOT / "course.toml"))
    theirs = course_catalogue(config)
    assert [m.sentence for m in theirs] == [m.sentence for m in ours]


def test_a_catalogue_folder_that_is_missing_stops_the_release(tmp_path):
    course = toy_course(tmp_path).parent
    shutil.rmtree(course / "mistakes")
    config = load_course(course / "course.toml")
    with pytest.raises(ReleaseError) as error:
        build_release(config, pass_rule=PassRule())
    assert str(error.value) == (
        f"The course's mistakes catalogue folder {course / 'mistakes'} does not exist; the "
        "release needs it."
    )


def test_leak_check_refuses_a_file_under_the_mutants_folder(monkeypatch, tmp_path):
    config = load_course(toy_course(tmp_path))
    original = steps.add_gitignore

    def plant(release):
        original(release)
        data = (TOY / "solution/mutants/scale.toml").read_bytes()
        release.add("solution/mutants/scale.toml", data, protected=True)

    monkeypatch.setattr(
        "autograder.release.pipeline.STEPS",
        tuple(plant if s is original else s for s in STEPS),
    )
    with pytest.raises(ReleaseError) as error:
        build_release(config, pass_rule=PassRule())
    assert str(error.value) == PRIVATE_PATH.format(
        path="solution/mutants/scale.toml", folder="solution/mutants"
    )


def test_toy_release_ships_its_catalogue_for_the_visible_graders(tmp_path):
    release = build_release(load_course(toy_course(tmp_path)), pass_rule=PassRule())
    assert {"mistakes/scale.toml", "mistakes/normalize.toml"} <= set(release.files)
    assert {"mistakes/scale.toml", "mistakes/normalize.toml"} <= release.protected
    assert not [p for p in release.files if p.startswith("solution/")]
    course_file = release.files["course.toml"].decode()
    assert 'mistakes = "mistakes"' in course_file
    assert "mutants =" not in course_file and "variants =" not in course_file
