"""Choosing each learner's commit (HEAD or the deadline's) and exporting it without touching
the clone."""

from __future__ import annotations

import os
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from autograder.gradebook import snapshot
from tests.batch.conftest import (
    AFTER,
    BEFORE,
    DEADLINE,
    ON_TIME_EXACTLY,
    commit_all,
    git,
    init_repo,
)


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, object]:
    """Three commits: before the deadline, exactly at it, and after it (a dirty tree too)."""
    path = tmp_path / "learner"
    init_repo(path)
    (path / "answer.py").write_text("ANSWER = 1\n")
    first = commit_all(path, "first", BEFORE)
    (path / "answer.py").write_text("ANSWER = 2\n")
    at = commit_all(path, "at the deadline", ON_TIME_EXACTLY)
    (path / "answer.py").write_text("ANSWER = 3\n")
    later = commit_all(path, "late", AFTER)
    (path / "answer.py").write_text("ANSWER = 'uncommitted'\n")
    return {"path": path, "first": first, "at": at, "later": later}


def _state(path: Path) -> tuple[str, str, str]:
    return (
        git(path, "rev-parse", "HEAD"),
        git(path, "status", "--porcelain"),
        (path / "answer.py").read_text(),
    )


def test_the_deadline_picks_the_last_commit_at_or_before_it_and_flags_later_ones(
    repo: dict, tmp_path: Path
) -> None:
    path = repo["path"]
    before = _state(path)
    chosen = snapshot.select(path, snapshot.parse_deadline(DEADLINE))
    assert chosen == snapshot.Selection(
        repo["at"], "2026-08-15T18:29:00+00:00", True, 1, "2026-08-20T12:00:00+00:00"
    )
    folder = snapshot.export(path, chosen, tmp_path / "export")
    assert (folder / "answer.py").read_text() == "ANSWER = 2\n"
    assert _state(path) == before  # HEAD, index and working tree untouched


def test_an_earlier_deadline_picks_an_earlier_commit(repo: dict, tmp_path: Path) -> None:
    chosen = snapshot.select(repo["path"], snapshot.parse_deadline("2026-08-12T00:00:00Z"))
    assert (chosen.commit, chosen.later) == (repo["first"], True)
    assert (chosen.later_count, chosen.last_time) == (2, "2026-08-20T12:00:00+00:00")
    folder = snapshot.export(repo["path"], chosen, tmp_path / "export")
    assert (folder / "answer.py").read_text() == "ANSWER = 1\n"


def test_without_a_deadline_head_is_graded_as_committed(repo: dict, tmp_path: Path) -> None:
    chosen = snapshot.select(repo["path"], None)
    assert chosen == snapshot.Selection(repo["later"], "2026-08-20T12:00:00+00:00", None)
    folder = snapshot.export(repo["path"], chosen, tmp_path / "export")
    assert (folder / "answer.py").read_text() == "ANSWER = 3\n"
    assert not (folder / ".git").exists()


def test_a_deadline_after_every_commit_has_no_later_commits(repo: dict) -> None:
    chosen = snapshot.select(repo["path"], snapshot.parse_deadline("2027-01-01T00:00:00+00:00"))
    assert (chosen.commit, chosen.later) == (repo["later"], False)


def test_no_commit_before_the_deadline_is_an_error_naming_the_first_commit(repo: dict) -> None:
    with pytest.raises(snapshot.SnapshotError, match="no commit at or before the deadline") as e:
        snapshot.select(repo["path"], snapshot.parse_deadline("2026-01-01T00:00:00+00:00"))
    assert "2026-08-10T12:00:00+00:00" in str(e.value)


def test_a_shallow_clone_without_the_commits_before_the_deadline_says_so(
    repo: dict, tmp_path: Path
) -> None:
    """H48: a --depth 1 clone was told it had no commit before the deadline, though its real
    history had one on time."""
    shallow = tmp_path / "shallow"
    source = f"file://{repo['path']}"
    subprocess.run(["git", "clone", "-q", "--depth", "1", source, str(shallow)], check=True)
    with pytest.raises(snapshot.SnapshotError) as error:
        snapshot.select(shallow, snapshot.parse_deadline(DEADLINE))
    assert str(error.value) == snapshot.SHALLOW.format(
        path=shallow, deadline="2026-08-15T18:29:00+00:00", first="2026-08-20T12:00:00+00:00"
    )


def test_a_bare_clone_is_read_from_its_history(repo: dict, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo["path"]), str(bare)], check=True)
    chosen = snapshot.select(bare, snapshot.parse_deadline(DEADLINE))
    assert chosen.commit == repo["at"]
    assert (
        snapshot.export(bare, chosen, tmp_path / "x") / "answer.py"
    ).read_text() == "ANSWER = 2\n"


@pytest.mark.parametrize(
    ("make", "phrase"),
    [
        (lambda p: None, "does not exist"),
        (lambda p: p.mkdir(), "is empty"),
        (lambda p: p.write_text("x"), "is a file, not a folder"),
        (lambda p: init_repo(p), "has no commits yet"),
    ],
)
def test_missing_empty_and_commitless_repositories_are_errors(
    tmp_path: Path, make, phrase: str
) -> None:
    path = tmp_path / "learner"
    make(path)
    with pytest.raises(snapshot.SnapshotError, match=phrase):
        snapshot.select(path, None)


def test_a_plain_folder_is_graded_in_place_but_not_against_a_deadline(tmp_path: Path) -> None:
    (tmp_path / "answer.py").write_text("ANSWER = 1\n")
    assert snapshot.select(tmp_path, None) == snapshot.Selection()
    assert snapshot.export(tmp_path, snapshot.Selection(), tmp_path / "unused") == tmp_path
    with pytest.raises(snapshot.SnapshotError, match="is not a git repository"):
        snapshot.select(tmp_path, snapshot.parse_deadline(DEADLINE))


@pytest.mark.parametrize("value", ["2026-08-15T23:59:00", "tomorrow", ""])
def test_a_deadline_needs_a_time_zone(value: str) -> None:
    with pytest.raises(ValueError, match="with a time zone"):
        snapshot.parse_deadline(value)


def test_a_deadline_keeps_its_offset() -> None:
    moment = snapshot.parse_deadline(DEADLINE)
    assert moment == datetime.fromisoformat("2026-08-15T18:29:00+00:00")


def test_a_head_naming_a_missing_branch_is_not_called_commitless(repo: dict) -> None:
    """A server whose default branch was deleted (its copy's HEAD follows it) has commits on
    other branches: the row says so rather than 'no commits yet'."""
    path = repo["path"]
    git(path, "branch", "-q", "-m", "main", "trunk")
    git(path, "symbolic-ref", "HEAD", "refs/heads/nope")
    with pytest.raises(snapshot.SnapshotError) as error:
        snapshot.select(path, None)
    assert str(error.value) == snapshot.HEAD_MISSING.format(
        path=path, head="nope", branches="trunk"
    )


def test_a_commit_with_too_many_bytes_of_files_is_not_exported(
    repo: dict, tmp_path: Path, monkeypatch
) -> None:
    """A learner can push a file of gigabytes that compresses to almost nothing: it is
    streamed, never held in memory, and refused beyond the limit."""
    path = repo["path"]
    (path / "data.bin").write_bytes(b"\0" * 5000)
    commit_all(path, "a big file", AFTER)
    monkeypatch.setattr(snapshot, "MAX_EXPORT_BYTES", 4096)
    selection = snapshot.select(path, None)
    with pytest.raises(snapshot.SnapshotError) as error:
        snapshot.export(path, selection, tmp_path / "out")
    assert str(error.value) == snapshot.TOO_BIG.format(path=path, limit=0)


def test_links_and_names_too_long_are_left_out_and_listed(repo: dict, tmp_path: Path) -> None:
    """H33: a 300-byte file name failed the whole grade ("The grader itself failed (OSError:
    File name too long)") and a module committed as a symbolic link vanished without a word."""
    path = repo["path"]
    (path / "pkg").mkdir()
    (path / "pkg" / "real.py").write_text("X = 1\n")
    (path / "pkg" / "linked.py").symlink_to("real.py")
    git(path, "add", "pkg")
    long_name = "n" * 300 + ".py"  # git keeps it; no Linux file system can
    blob = git(path, "hash-object", "-w", "pkg/real.py")
    git(path, "update-index", "--add", "--cacheinfo", f"100644,{blob},docs/{long_name}")
    git(path, "commit", "-q", "-m", "a link and a long name", when=AFTER)
    left_out: list[tuple[str, str]] = []
    folder = snapshot.export(path, snapshot.select(path, None), tmp_path / "out", left_out)
    assert (folder / "pkg" / "real.py").read_text() == "X = 1\n"
    assert not (folder / "pkg" / "linked.py").exists()
    assert (folder / "answer.py").read_text() == "ANSWER = 3\n"  # the rest is all there
    assert sorted(left_out) == [
        (f"docs/{long_name}", snapshot.LONG_NAME_LEFT_OUT),
        ("pkg/linked.py", snapshot.LINK_LEFT_OUT),
    ]


def test_a_commit_with_too_many_files_is_not_exported(
    repo: dict, tmp_path: Path, monkeypatch
) -> None:
    path = repo["path"]
    for i in range(5):
        (path / f"f{i}.txt").write_text("")
    commit_all(path, "many files", AFTER)
    monkeypatch.setattr(snapshot, "MAX_EXPORT_FILES", 4)
    with pytest.raises(snapshot.SnapshotError) as error:
        snapshot.export(path, snapshot.select(path, None), tmp_path / "out")
    assert str(error.value) == snapshot.TOO_MANY.format(path=path, limit=4)


def test_a_git_that_stalls_mid_archive_is_stopped_at_the_limit(
    repo: dict, tmp_path: Path, monkeypatch
) -> None:
    """The time limit used to apply only once the whole archive was read: a git archive that
    stopped sending blocked that learner's grade for ever."""
    path = repo["path"]
    selection = snapshot.select(path, None)
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "git").write_text("#!/bin/sh\nprintf 'partial'\nexec sleep 600\n")
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(snapshot, "GIT_TIMEOUT", 1.0)
    started = time.monotonic()
    with pytest.raises(snapshot.SnapshotError) as error:
        snapshot.export(path, selection, tmp_path / "out")
    assert time.monotonic() - started < 30
    assert str(error.value) == snapshot.EXPORT_TOO_SLOW.format(seconds=1.0, path=path)


def test_a_left_out_name_that_is_not_utf8_is_listed_readably(repo: dict, tmp_path: Path) -> None:
    """H35: a link named b"bad\\xffname" failed the learner's grade (UnicodeEncodeError while
    writing summary.md) on every run."""
    path = repo["path"]
    os.symlink(b"answer.py", bytes(path) + b"/bad\xffname")
    git(path, "checkout", "--", "answer.py")
    commit_all(path, "an odd name", AFTER)
    left_out: list[tuple[str, str]] = []
    snapshot.export(path, snapshot.select(path, None), tmp_path / "out", left_out)
    assert left_out == [("bad\ufffdname", snapshot.LINK_LEFT_OUT)]
    ("bad\ufffdname").encode("utf-8")  # a report can write it


def test_a_submodule_is_listed_as_left_out(repo: dict, tmp_path: Path) -> None:
    """H35: a submodule (a gitlink) became an empty folder, without a word to the learner."""
    path = repo["path"]
    git(path, "checkout", "--", "answer.py")
    head = git(path, "rev-parse", "HEAD")
    git(path, "update-index", "--add", "--cacheinfo", f"160000,{head},pkg/sub")
    git(path, "commit", "-q", "-m", "a submodule", when=AFTER)
    left_out: list[tuple[str, str]] = []
    folder = snapshot.export(path, snapshot.select(path, None), tmp_path / "out", left_out)
    assert left_out == [("pkg/sub", snapshot.SUBMODULE_LEFT_OUT)]
    assert (folder / "answer.py").read_text() == "ANSWER = 3\n"


@pytest.mark.parametrize("deadline", [None, "2026-08-15T23:59:00+00:00"])
def test_a_commit_time_no_calendar_holds_is_an_error_naming_the_commit(
    tmp_path: Path, deadline: str | None
) -> None:
    """A commit object written by hand can carry any committer time; git prints it, a date
    cannot hold it (year 3170843): the row's error names the commit and what to do."""
    path = tmp_path / "learner"
    init_repo(path)
    (path / "answer.py").write_text("ANSWER = 1\n")
    git(path, "add", "-A")
    tree = git(path, "write-tree")
    person = "x <a@b> 99999999999999 +0000"
    forged = f"tree {tree}\nauthor {person}\ncommitter {person}\n\nfuture\n"
    commit = subprocess.run(
        ["git", "-C", str(path), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=forged,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(path, "update-ref", "HEAD", commit)
    with pytest.raises(snapshot.SnapshotError) as error:
        snapshot.select(path, snapshot.parse_deadline(deadline) if deadline else None)
    assert str(error.value) == snapshot.NO_CALENDAR_DATE.format(
        commit=commit[:12], path=path, seconds="99999999999999"
    )
