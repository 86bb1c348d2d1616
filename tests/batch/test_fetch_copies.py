"""The copies grade-class keeps of repositories given by clone URL (gradebook/fetch.py), in
DIR/.repos: whatever else is found at a copy's path is replaced, not a traceback; a copy's
HEAD follows the server's default branch; no token in a URL stays on disk."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.gradebook import fetch, roster, snapshot
from tests.batch.conftest import (
    git,
    grade_class_main,
    needs_git_daemon,
    read_gradebook,
    url_roster,
)

pytestmark = needs_git_daemon


@pytest.mark.parametrize("junk", ["file", "link", "folder"])
def test_whatever_is_at_a_copys_path_is_replaced_by_the_clone(
    git_server, toy_class, tmp_path: Path, junk: str
) -> None:
    url, _ = git_server
    repos = tmp_path / "out" / ".repos"
    repos.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "note.txt").write_text("mine")
    copy = repos / "good.git"
    if junk == "file":
        copy.write_text("not a repository")
    elif junk == "link":
        copy.symlink_to(elsewhere, target_is_directory=True)
    else:
        copy.mkdir()
        (copy / "HEAD").write_text("not a repository")
    (repos / ".partial").write_text("a file where the clones are made")
    roster_csv = url_roster(tmp_path, {"good": f"{url}/good.git"})
    assert grade_class_main(roster_csv, tmp_path / "out") == 0
    [row] = read_gradebook(tmp_path / "out" / "gradebook.csv")
    assert (row["commit"], row["errors"]) == (toy_class["good_broken"], "")
    assert not copy.is_symlink() and (copy / "objects").is_dir()
    assert (elsewhere / "note.txt").read_text() == "mine"  # a link's target is left alone


def test_a_file_where_the_copies_go_stops_the_run_with_a_sentence(
    git_server, tmp_path: Path, capsys
) -> None:
    url, _ = git_server
    out = tmp_path / "out"
    out.mkdir()
    (out / ".repos").write_text("mine")
    roster_csv = url_roster(tmp_path, {"good": f"{url}/good.git"})
    assert grade_class_main(roster_csv, out) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert fetch.REPOS_NOT_FOLDER.format(path=out / ".repos") in err
    assert (out / ".repos").read_text() == "mine"


def test_the_copys_head_follows_the_servers_default_branch(
    git_server, toy_class, tmp_path: Path
) -> None:
    url, served = git_server
    bare = served / "moving.git"
    git(served, "init", "-q", "--bare", "-b", "main", "moving.git")
    good = toy_class["roster"] / "good"
    roster_csv = url_roster(tmp_path, {"mover": f"{url}/moving.git"})
    out = tmp_path / "out"
    try:
        assert grade_class_main(roster_csv, out) == 1  # cloned empty: nothing to grade yet
        [row] = read_gradebook(out / "gradebook.csv")
        assert row["errors"] == snapshot.NO_COMMITS.format(path=f"{url}/moving.git")
        # The first push goes to master, which the server then names its default branch.
        git(good, "push", "-q", str(bare), f"{toy_class['good_on_time']}:refs/heads/master")
        git(bare, "symbolic-ref", "HEAD", "refs/heads/master")
        assert grade_class_main(roster_csv, out, force=True) == 0
        assert read_gradebook(out / "gradebook.csv")[0]["commit"] == toy_class["good_on_time"]
        # The default branch renamed to trunk (and moved on); master is kept.
        git(good, "push", "-q", str(bare), f"{toy_class['good_broken']}:refs/heads/trunk")
        git(bare, "symbolic-ref", "HEAD", "refs/heads/trunk")
        assert grade_class_main(roster_csv, out, force=True) == 0
        assert read_gradebook(out / "gradebook.csv")[0]["commit"] == toy_class["good_broken"]
    finally:
        shutil.rmtree(bare)  # served for this test only


def test_no_token_in_a_clone_url_stays_on_disk(
    git_server, toy_class, tmp_path: Path, monkeypatch
) -> None:
    url, _ = git_server
    token_url = "https://ghp_SECRET@git.example.invalid/good.git"
    # The user's git configuration sends that URL to the test server (url.<base>.insteadOf).
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{url}/.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "https://ghp_SECRET@git.example.invalid/")
    roster_csv = url_roster(tmp_path, {"good": token_url})
    out = tmp_path / "out"
    assert grade_class_main(roster_csv, out) == 0
    copy = out / ".repos" / "good.git"
    assert git(copy, "config", "remote.origin.url") == "https://git.example.invalid/good.git"
    objects = (copy / "objects").stat().st_ino
    assert grade_class_main(roster_csv, out, force=True) == 0  # an update: FETCH_HEAD written
    assert (copy / "objects").stat().st_ino == objects  # the same copy, updated in place
    assert (copy / "FETCH_HEAD").is_file()
    holding = [p for p in out.rglob("*") if p.is_file() and b"SECRET" in p.read_bytes()]
    assert holding == []
    assert read_gradebook(out / "gradebook.csv")[0]["commit"] == toy_class["good_broken"]


def test_a_malformed_url_is_that_learners_row_and_the_run_goes_on(
    git_server, toy_class, tmp_path: Path
) -> None:
    url, _ = git_server
    bad = "https://ghp_V6TOKEN@[::1/org/x.git"  # urlsplit: "Invalid IPv6 URL"
    roster_csv = url_roster(tmp_path, {"good": f"{url}/good.git", "v6": bad})
    out = tmp_path / "out"
    assert grade_class_main(roster_csv, out) == 1
    rows = {row["learner"]: row for row in read_gradebook(out / "gradebook.csv")}
    assert rows["good"]["commit"] == toy_class["good_broken"]
    assert rows["v6"]["errors"] == roster.MALFORMED_URL.format(
        learner="v6", problem="Invalid IPv6 URL"
    )
    assert [p for p in out.rglob("*") if p.is_file() and b"V6TOKEN" in p.read_bytes()] == []


def test_a_copy_git_cannot_update_is_cloned_again(git_server, toy_class, tmp_path: Path) -> None:
    """A ref lock left by a killed fetch (or damaged objects) made every later update fail,
    and the old commit was graded forever."""
    url, served = git_server
    bare = served / "locked.git"
    shutil.copytree(served / "good.git", bare)
    roster_csv = url_roster(tmp_path, {"lk": f"{url}/locked.git"})
    out = tmp_path / "out"
    try:
        git(bare, "update-ref", "refs/heads/main", toy_class["good_on_time"])
        assert grade_class_main(roster_csv, out) == 0
        copy = out / ".repos" / "lk.git"
        (copy / "refs" / "heads" / "main.lock").write_text("")  # a killed fetch's lock
        git(bare, "update-ref", "refs/heads/main", toy_class["good_broken"])  # a new push
        assert grade_class_main(roster_csv, out, force=True) == 0
        assert read_gradebook(out / "gradebook.csv")[0]["commit"] == toy_class["good_broken"]
        assert not (copy / "refs" / "heads" / "main.lock").exists()
    finally:
        shutil.rmtree(bare)
