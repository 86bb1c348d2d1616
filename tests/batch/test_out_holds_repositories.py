"""An output folder that holds learners' own repositories is refused, never written over.

H36 followed the README with a CSV roster beside the clones (`learner,repo` with relative
paths) and `--out .`: grade-class replaced each learner's repository by their reports, history
and code gone, and `merge` did the same to a folder holding a learner's submission."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.commands import merge
from autograder.gradebook import store

from .conftest import TOY_COURSE, git, grade_class_main


def _beside(toy_class: dict, tmp_path: Path) -> Path:
    """A folder holding the good learner's clone and a CSV roster naming it."""
    folder = tmp_path / "class"
    shutil.copytree(toy_class["roster"] / "good", folder / "good")
    (folder / "roster.csv").write_text("learner,repo\ngood,good\n")
    return folder


def test_grade_class_refuses_an_out_holding_a_learners_repository(
    toy_class: dict, tmp_path: Path, capsys
) -> None:
    folder = _beside(toy_class, tmp_path)
    assert grade_class_main(folder / "roster.csv", folder) == 2
    said = store.FOREIGN.format(out=folder, names="good", them="it")
    assert " ".join(capsys.readouterr().err.split()) == said
    assert git(folder / "good", "rev-parse", "HEAD") == toy_class["good_broken"]
    assert not (folder / "good" / store.RECORD_FILE).exists()
    assert not (folder / store.GRADEBOOK_FILE).exists()


def test_merge_refuses_an_out_holding_a_learners_repository(
    toy_class: dict, tmp_path: Path, capsys
) -> None:
    shard = tmp_path / "shard"
    assert grade_class_main(toy_class["roster"], shard, shard="1/1") == 1
    out = _beside(toy_class, tmp_path)
    assert merge.main(shards=[shard], out=out, course=TOY_COURSE, quiet=True) == 2
    assert "which the grader did not write" in " ".join(capsys.readouterr().err.split())
    assert git(out / "good", "rev-parse", "HEAD") == toy_class["good_broken"]


@pytest.mark.parametrize("kind", ["file", "folder", "link"])
def test_a_learner_folder_is_never_put_over_something_else(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "out"
    theirs = out / "ada"
    if kind == "file":
        out.mkdir()
        theirs.write_text("mine")
    elif kind == "folder":
        (theirs / "src").mkdir(parents=True)
    else:
        (tmp_path / "elsewhere").mkdir()
        out.mkdir()
        theirs.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FileExistsError):
        store.commit_learner(out, store.staging_dir(out, "ada"), store.LearnerRecord("ada"))
    assert theirs.exists() or theirs.is_symlink()
    assert not (theirs / store.RECORD_FILE).exists()


def test_an_empty_folder_or_a_learner_folder_is_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "ada").mkdir(parents=True)
    store.commit_learner(out, store.staging_dir(out, "ada"), store.LearnerRecord("ada", total=1))
    store.commit_learner(out, store.staging_dir(out, "ada"), store.LearnerRecord("ada", total=2))
    assert store.read_record(out, "ada").total == 2


@pytest.mark.parametrize("content", ['{"learner": "good"}', "not json"])
def test_a_repository_holding_a_record_json_of_its_own_is_not_taken_for_ours(
    toy_class: dict, tmp_path: Path, content: str
) -> None:
    """H37: any file record.json at a repository's top made it look like a learner folder."""
    folder = _beside(toy_class, tmp_path)
    (folder / "good" / store.RECORD_FILE).write_text(content)
    assert grade_class_main(folder / "roster.csv", folder) == 2
    assert git(folder / "good", "rev-parse", "HEAD") == toy_class["good_broken"]


def test_a_folder_at_run_json_is_refused_not_a_traceback(
    toy_class: dict, tmp_path: Path, capsys
) -> None:
    """H37: an older version's learner named run.json made grade-class fail writing the run
    file (IsADirectoryError)."""
    out = tmp_path / "out"
    (out / store.RUN_FILE / "src").mkdir(parents=True)
    assert grade_class_main(toy_class["roster"], out) == 2
    said = store.FOREIGN.format(out=out.resolve(), names=store.RUN_FILE, them="it")
    assert " ".join(capsys.readouterr().err.split()) == said
