"""merge refuses shards graded with different settings, and says which shards of a run are
missing (commands/merge.py): each record keeps its run's settings digest and its --shard."""

from __future__ import annotations

from pathlib import Path

from autograder.commands import merge
from autograder.gradebook import report, store

from .conftest import TOY_COURSE


def _shard(tmp_path: Path, name: str, learner: str, *, settings: str, shard: str) -> Path:
    folder = tmp_path / name
    staged = store.staging_dir(folder, learner)
    record = store.LearnerRecord(
        learner=learner, error="Its repository is empty.", settings=settings, shard=shard
    )
    store.commit_learner(folder, staged, record)
    return folder


def test_shards_graded_with_other_settings_are_not_merged(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    second = _shard(tmp_path, "s2", "bo", settings="bbbb", shard="2/2")
    out = tmp_path / "merged"
    assert merge.main(shards=[first, second], out=out, course=TOY_COURSE, quiet=True) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert merge.MIXED.format(first=first, second=second) in err
    assert not out.exists()


def test_a_missing_shard_is_said_and_written_in_the_report(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/3")
    third = _shard(tmp_path, "s3", "cy", settings="aaaa", shard="3/3")
    out = tmp_path / "merged"
    assert merge.main(shards=[first, third], out=out, course=TOY_COURSE, quiet=True) == 1
    said = report.MISSING_SHARDS.format(have="1, 3", count=3, missing="2")
    assert said in " ".join(capsys.readouterr().err.split())
    assert said in (out / report.MARKDOWN_FILE).read_text()


def test_every_shard_given_says_nothing_missing(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    second = _shard(tmp_path, "s2", "bo", settings="aaaa", shard="2/2")
    out = tmp_path / "merged"
    assert merge.main(shards=[first, second], out=out, course=TOY_COURSE, quiet=True) == 1
    assert "missing" not in capsys.readouterr().err
    assert "missing" not in (out / report.MARKDOWN_FILE).read_text()
