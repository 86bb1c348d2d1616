"""Reading rosters (folders and CSVs) and cutting them into shards."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.gradebook.roster import (
    Learner,
    RosterError,
    parse_shard,
    read_roster,
    shard,
)


def test_a_folder_roster_has_one_learner_per_subfolder_sorted_by_id(tmp_path: Path) -> None:
    for name in ("zoe", "amy", "Mo"):
        (tmp_path / name).mkdir()
    (tmp_path / ".git").mkdir()  # hidden folders are not learners
    (tmp_path / "notes.txt").write_text("not a learner")
    learners = read_roster(tmp_path)
    assert [lr.id for lr in learners] == ["Mo", "amy", "zoe"]
    assert learners[1].repo == (tmp_path / "amy").resolve()


def test_a_folder_roster_names_a_folder_that_is_no_learner_id(tmp_path: Path) -> None:
    for name in ("amy", "-bad"):
        (tmp_path / name).mkdir()
    with pytest.raises(RosterError) as caught:
        read_roster(tmp_path)
    assert str(caught.value) == (
        f"The roster folder {tmp_path} holds a folder '-bad', whose name is the learner id; an "
        "id must start with a letter or digit, use only letters, digits and . _ @ + - and have "
        "at most 100 characters (rename the folder)."
    )


def test_a_csv_roster_resolves_paths_unwraps_file_urls_and_keeps_clone_urls(
    tmp_path: Path,
) -> None:
    (tmp_path / "repos" / "amy").mkdir(parents=True)
    target = tmp_path / "elsewhere" / "bo"
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "Learner,Repo\n"
        "amy,repos/amy\n"
        f"bo,{target.as_uri()}\n"
        "cy,https://github.com/cy/t101.git\n"
        "\n"
        "dee,git@github.com:dee/t101.git\n"
        "eve,ftp://example.org/eve/t101.git\n"
    )
    learners = {lr.id: lr for lr in read_roster(roster)}
    assert learners["amy"] == Learner("amy", (tmp_path / "repos" / "amy").resolve())
    assert learners["bo"].repo == target.resolve()
    assert learners["cy"] == Learner("cy", None, url="https://github.com/cy/t101.git")
    assert learners["dee"] == Learner("dee", None, url="git@github.com:dee/t101.git")
    assert learners["eve"].repo is None and not learners["eve"].url
    assert learners["eve"].error == (
        "The repository ftp://example.org/eve/t101.git has the URL scheme ftp, which batch "
        "grading does not fetch; give a local path, a file:// URL, or a clone URL (https://, "
        "ssh://, git:// or user@host:path)."
    )


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("name,path\namy,a\n", "must have a header row with the columns learner and repo"),
        ("learner,repo\namy,a\namy,b\n", "names the learner amy twice (lines 2 and 3)"),
        ("learner,repo\n../up,a\n", "has the learner id '../up' on line 2"),
        ("learner,repo\n", "names no learners"),
        ("learner,repo\nreport.md,a\n", "name of a file or folder of the class output"),
        ("learner,repo\nnbgrader,a\n", "name of a file or folder of the class output"),
        ("learner,repo\nben,a\nBen,b\n", "names the learners Ben and ben, ids that differ only"),
        ("learner,repo,learner\namy,a,ben\n", "has the column learner twice in its header row"),
        ("Repo,learner,repo\na,amy,b\n", "has the column repo twice in its header row"),
        ('learner,repo\namy,a\n"bad\nid",b\n', "has the learner id 'bad\\nid' on line 3"),
        ('learner,repo\n"amy","a\n\nb"\namy,c\n', "names the learner amy twice (lines 2 and 5)"),
    ],
)
def test_a_bad_csv_roster_is_refused_with_a_sentence(
    tmp_path: Path, text: str, phrase: str
) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text(text)
    with pytest.raises(RosterError, match=None) as caught:
        read_roster(roster)
    assert phrase in str(caught.value)


def test_a_missing_roster_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RosterError, match="does not exist"):
        read_roster(tmp_path / "nope.csv")


def test_shards_are_disjoint_cover_the_roster_and_ignore_input_order() -> None:
    learners = [Learner(f"l{i:02d}", Path(f"/r/{i}")) for i in range(11)]
    parts = [shard(list(reversed(learners)), (i, 3)) for i in (1, 2, 3)]
    ids = [lr.id for part in parts for lr in part]
    assert sorted(ids) == [lr.id for lr in learners]
    assert len(ids) == len(set(ids))
    assert [lr.id for lr in parts[0]] == ["l00", "l03", "l06", "l09"]
    assert [len(p) for p in parts] == [4, 4, 3]
    assert shard(learners, None) == learners


@pytest.mark.parametrize("value", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_refused(value: str) -> None:
    with pytest.raises(RosterError, match="--shard must look like i/n"):
        parse_shard(value)


def test_a_shard_is_parsed_one_based() -> None:
    assert parse_shard(" 2/4 ") == (2, 4)
    assert parse_shard(None) is None


def test_learner_folders_that_differ_only_in_case_are_refused(tmp_path: Path) -> None:
    """H37: Ben and ben are two folders here and would be one on macOS and Windows."""
    for name in ("ben", "Ben"):
        (tmp_path / name).mkdir()
    with pytest.raises(RosterError) as caught:
        read_roster(tmp_path)
    assert "names the learners Ben and ben, ids that differ only in case" in str(caught.value)
