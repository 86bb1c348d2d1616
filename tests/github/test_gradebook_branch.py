"""The gradebook branch: restored into a folder, saved as the next commit on top of the one
restored, and refused when another run saved meanwhile (a compare-and-swap by git's push)."""

from __future__ import annotations

import subprocess

import pytest

from autograder.github.gradebook_branch import MOVED_MEANWHILE, BranchError, restore, save

BRANCH = "autograder-gradebook"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def origin(tmp_path):
    bare = tmp_path / "origin.git"
    _git("init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    _git("init", "-q", "-b", "main", str(seed))
    (seed / "course.toml").write_text("[course]\n")
    _git("-C", str(seed), "add", "-A")
    _git("-C", str(seed), "-c", "user.name=i", "-c", "user.email=i@x", "commit", "-qm", "c")
    _git("-C", str(seed), "push", "-q", str(bare), "main")
    return bare


def _checkout(origin, path):
    _git("clone", "-q", "--depth=1", f"file://{origin}", str(path))
    return path


def test_restore_save_and_a_run_that_saved_meanwhile(origin, tmp_path):
    one, two = _checkout(origin, tmp_path / "one"), _checkout(origin, tmp_path / "two")
    assert restore(BRANCH, one / "gradebook", repo=one) == ""  # the first run: no branch yet
    assert restore(BRANCH, two / "gradebook", repo=two) == ""
    (one / "gradebook" / "amara").mkdir()
    (one / "gradebook" / "amara" / "record.json").write_text("{}\n")
    (one / "gradebook" / ".repos").mkdir()
    (one / "gradebook" / ".repos" / "clone").write_text("not kept\n")
    first = save(BRANCH, one / "gradebook", base="", message="run 1", repo=one)
    assert _git("-C", str(origin), "ls-tree", "-r", "--name-only", BRANCH).split() == [
        "amara/record.json"
    ]
    assert save(BRANCH, one / "gradebook", base=first, message="run 1b", repo=one) == ""
    (two / "gradebook" / "ben.txt").write_text("another run\n")
    with pytest.raises(BranchError) as refused:
        save(BRANCH, two / "gradebook", base="", message="run 2", repo=two)
    assert str(refused.value) == MOVED_MEANWHILE.format(branch=BRANCH)
    three = _checkout(origin, tmp_path / "three")
    assert restore(BRANCH, three / "gradebook", repo=three) == first
    assert (three / "gradebook" / "amara" / "record.json").read_text() == "{}\n"
    assert not (three / "gradebook" / ".repos").exists()
