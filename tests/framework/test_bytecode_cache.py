"""The per-user bytecode cache of `autograder grade` (autograder/grading/bytecode.py).

Two real `python -m autograder grade` runs on a copy of the toy course with bytecode writing off
(PYTHONDONTWRITEBYTECODE=1): the graders' bytecode goes to $XDG_CACHE_HOME and nowhere in the
course or the submission; an unusable cache changes nothing but the speed. The rest checks the
context manager in this process.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grading.bytecode import APP_NAME, SUBFOLDER, bytecode_cache, cache_folder

TOY = Path(__file__).parent / "toy_course"


@pytest.fixture
def course(tmp_path):
    """A private copy of the toy course (its solution/ is the submission graded below)."""
    copy = tmp_path / "course"
    shutil.copytree(TOY, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return copy


@pytest.fixture
def no_bytecode(monkeypatch, tmp_path):
    """Bytecode writing off, as PYTHONDONTWRITEBYTECODE=1 sets it; tmp_path is the home."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setenv("HOME", str(tmp_path))


def grade(course: Path, cache_home: Path, out: Path) -> subprocess.CompletedProcess:
    home = cache_home.parent
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(cache_home)}
    env["HOME"] = str(home)  # the cache must lie in the home folder, which workers cover
    env.pop("PYTHONPYCACHEPREFIX", None)
    return subprocess.run(
        [sys.executable, "-m", "autograder", "grade", "solution", "--visible-only"]
        + ["--out", str(out), "--quiet"],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def compiled_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"]


def test_a_grade_keeps_the_graders_bytecode_in_the_users_cache_only(course, tmp_path):
    completed = grade(course, tmp_path / "cache", tmp_path / "out")
    assert completed.returncode == 0, completed.stderr
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] == 15.0

    real = course.resolve()
    mirror = tmp_path / "cache" / APP_NAME / SUBFOLDER / real.relative_to(real.anchor)
    graders = sorted(p.name.split(".")[0] for p in (mirror / "tests/graders/visible").iterdir())
    assert graders == ["test_toy_normalize", "test_toy_scale"]  # pytest's rewritten modules
    assert compiled_files(course) == []  # neither the course tree nor solution/, the submission
    assert stat.S_IMODE((tmp_path / "cache" / APP_NAME / SUBFOLDER).stat().st_mode) == 0o700


def test_a_cache_that_cannot_be_created_changes_nothing_but_the_speed(course, tmp_path):
    in_the_way = tmp_path / "not-a-folder"
    in_the_way.write_text("a file where the cache folder would go")
    completed = grade(course, in_the_way, tmp_path / "out")
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] == 15.0
    assert compiled_files(course) == []
    assert in_the_way.read_text() == "a file where the cache folder would go"


def test_the_cache_folder_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / APP_NAME / SUBFOLDER


def test_inside_the_block_bytecode_goes_to_the_cache_and_the_settings_come_back(
    no_bytecode, course, tmp_path
):
    folder = tmp_path / "cache" / "pycache"
    with pytest.raises(RuntimeError), bytecode_cache([course], folder) as used:
        assert used == folder
        assert (sys.pycache_prefix, sys.dont_write_bytecode) == (str(folder), False)
        raise RuntimeError("a grade that crashed")
    assert (sys.pycache_prefix, sys.dont_write_bytecode) == (None, True)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def unusable_folders(tmp_path: Path, course: Path) -> dict[str, Path]:
    in_the_way = tmp_path / "file"
    in_the_way.write_text("")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # others could plant bytecode that the harness would run
    return {
        "outside the home folder": tmp_path.parent / f"{tmp_path.name}-cache",
        "inside the course": course / ".cache",
        "inside the submission": course / "solution" / "toypkg" / "cache",
        "holding the course": tmp_path,
        "under a file": in_the_way / "pycache",
        "writable by others": shared,
    }


@pytest.mark.parametrize(
    "case",
    [
        "outside the home folder",
        "inside the course",
        "inside the submission",
        "holding the course",
        "under a file",
        "writable by others",
    ],
)
def test_an_unusable_folder_is_skipped_without_a_word(no_bytecode, course, tmp_path, case, capsys):
    folder = unusable_folders(tmp_path, course)[case]
    existed = folder.exists()
    with bytecode_cache([course, course / "solution"], folder) as used:
        assert used is None
        assert (sys.pycache_prefix, sys.dont_write_bytecode) == (None, True)
    assert folder.exists() == existed  # nothing was created
    assert capsys.readouterr() == ("", "")


def test_with_bytecode_writing_on_python_keeps_its_own_folders(monkeypatch, course, tmp_path):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    with bytecode_cache([course], tmp_path / "cache") as used:
        assert used is None
        assert not sys.dont_write_bytecode
    assert not (tmp_path / "cache").exists()
