"""A learner's own git folder is never trusted by the harness: its configuration could run any
command (`git archive` runs the filters it names, outside any sandbox), and a git folder that
points elsewhere (a link, a `.git` file, alternates) could make another repository's commit
the learner's. A repository the batch did not fetch itself is copied with the pack protocol
first; one whose git folder reaches outside itself is refused, naming what does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.gradebook import snapshot, store
from tests.batch.conftest import BEFORE, TOY, commit_all, git, grade_class_main, init_repo


def _learner(roster: Path, name: str) -> Path:
    repo = roster / name
    init_repo(repo)
    shutil.copytree(TOY / "solution" / "toypkg", repo / "toypkg")
    commit_all(repo, "done", BEFORE)
    return repo


def test_a_filter_in_the_learners_own_git_config_never_runs(tmp_path):
    roster, out, marker = tmp_path / "roster", tmp_path / "out", tmp_path / "PWNED"
    repo = _learner(roster, "kofi")
    (repo / ".gitattributes").write_text("* filter=evil\n")
    commit_all(repo, "attributes", BEFORE)
    git(repo, "config", "filter.evil.smudge", f"sh -c 'touch {marker}; cat'")
    git(repo, "config", "core.fsmonitor", f"touch {marker}")
    assert grade_class_main(roster, out) == 0
    assert not marker.exists()
    record = store.read_record(out, "kofi")
    assert record.error == "" and record.total == record.max_score


@pytest.mark.parametrize(
    "make, entry, what",
    [
        (
            lambda r, o: (shutil.rmtree(r / ".git"), (r / ".git").symlink_to(o / ".git")),
            ".git",
            snapshot.A_LINK,
        ),
        (
            lambda r, o: (
                shutil.rmtree(r / ".git"),
                (r / ".git").write_text(f"gitdir: {o}/.git\n"),
            ),
            ".git",
            snapshot.A_POINTER,
        ),
        (
            lambda r, o: (r / ".git/objects/info/alternates").write_text(f"{o}/.git/objects\n"),
            "objects/info/alternates",
            snapshot.A_POINTER,
        ),
        (
            lambda r, o: (r / ".git/commondir").write_text(f"{o}/.git\n"),
            "commondir",
            snapshot.A_POINTER,
        ),
        (
            lambda r, o: (
                shutil.rmtree(r / ".git/refs"),
                (r / ".git/refs").symlink_to(o / ".git/refs"),
            ),
            "refs",
            snapshot.A_LINK,
        ),
    ],
    ids=["git-link", "git-file", "alternates", "commondir", "refs-link"],
)
def test_a_git_folder_that_reaches_another_repository_is_refused(tmp_path, make, entry, what):
    roster, out = tmp_path / "roster", tmp_path / "out"
    ama = _learner(roster, "ama")
    kofi = _learner(roster, "kofi")
    (kofi / ".git" / "objects" / "info").mkdir(parents=True, exist_ok=True)
    make(kofi, ama)
    assert grade_class_main(roster, out) == 1
    error = store.read_record(out, "kofi").error
    assert error == snapshot.GIT_DIR_OUTSIDE.format(path=kofi.resolve(), entry=entry, what=what)
    assert store.read_record(out, "ama").error == ""
