"""merge refuses shards graded with different settings, and says which shards of a run are
missing (commands/merge.py): each record keeps its run's settings digest and its --shard."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autograder.commands import merge
from autograder.gradebook import lock, report, report_model, store
from autograder.gradebook.settings import JobSettings, instant_settings, run_settings

from .conftest import TOY_COURSE, read_gradebook


def _shard(
    tmp_path: Path, name: str, learner: str | None, *, settings: str, shard: str, run: bool = True
) -> Path:
    """A grade-class --shard output folder: one learner's record (or none), and run.json
    unless ``run`` is False (as an older version wrote it, also without record settings)."""
    folder = tmp_path / name
    folder.mkdir()
    if learner:
        staged = store.staging_dir(folder, learner)
        record = store.LearnerRecord(
            learner=learner,
            error="Its repository is empty.",
            settings=settings if run else "",
            shard=shard if run else "",
        )
        store.commit_learner(folder, staged, record)
    if run:
        store.write_run(folder, shard, settings)
    return folder


def test_shards_graded_with_other_settings_are_not_merged(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    second = _shard(tmp_path, "s2", "bo", settings="bbbb", shard="2/2")
    out = tmp_path / "merged"
    assert merge.main(shards=[first, second], out=out, course=TOY_COURSE, quiet=True) == 2
    err = " ".join(capsys.readouterr().err.split())
    # run.json without options (written before them): the settings are named as a kind
    assert merge.MIXED.format(first=first, second=second, what=merge.MIXED_UNNAMED) in err
    assert not out.exists()


def test_a_missing_shard_is_said_and_written_in_the_report(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/3")
    third = _shard(tmp_path, "s3", "cy", settings="aaaa", shard="3/3")
    out = tmp_path / "merged"
    code = merge.main(shards=[first, third], out=out, course=TOY_COURSE, quiet=True)
    assert code == merge.EXIT_MISSING_SHARDS == 3  # not 1, which regrade.yml lets pass
    said = report_model.MISSING_SHARDS.format(have="shards 1, 3", count=3, missing="2")
    assert said in " ".join(capsys.readouterr().err.split())
    assert said in (out / report.MARKDOWN_FILE).read_text()


def test_every_shard_given_says_nothing_missing(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    second = _shard(tmp_path, "s2", "bo", settings="aaaa", shard="2/2")
    out = tmp_path / "merged"
    assert merge.main(shards=[first, second], out=out, course=TOY_COURSE, quiet=True) == 1
    assert "missing" not in capsys.readouterr().err
    assert "missing" not in (out / report.MARKDOWN_FILE).read_text()


def test_a_shard_of_no_learner_is_merged_and_not_missed(tmp_path: Path, capsys) -> None:
    """Three learners in four shards: shard 4/4 holds no learner (H33: merge refused it, and
    without it said shard 4 was missing)."""
    shards = [
        _shard(tmp_path, f"s{i}", f"l{i}", settings="aaaa", shard=f"{i}/4") for i in (1, 2, 3)
    ]
    shards.append(_shard(tmp_path, "s4", None, settings="aaaa", shard="4/4"))
    out = tmp_path / "merged"
    assert merge.main(shards=shards, out=out, course=TOY_COURSE, quiet=True) == 1
    assert "missing" not in capsys.readouterr().err
    assert "missing" not in (out / report.MARKDOWN_FILE).read_text()


def test_a_shard_of_an_older_version_is_not_merged_with_a_new_one(tmp_path: Path, capsys) -> None:
    """An older version recorded no settings: whether they match cannot be known (H33 merged
    a no-deadline shard with a deadline one that way, and the report claimed the deadline)."""
    old = _shard(tmp_path, "s1", "ada", settings="", shard="1/2", run=False)
    new = _shard(tmp_path, "s2", "bo", settings="aaaa", shard="2/2")
    out = tmp_path / "merged"
    assert merge.main(shards=[old, new], out=out, course=TOY_COURSE, quiet=True) == 2
    assert merge.OLDER.format(old=old, new=new) in " ".join(capsys.readouterr().err.split())


def test_a_folder_of_other_learners_is_no_merge_output(tmp_path: Path, capsys) -> None:
    """H34: merging shard 1 into a grade-class output overwrote two of its learners with
    older grades, kept the others, and exited 0."""
    whole = _shard(tmp_path, "whole", "ada", settings="aaaa", shard="")
    first = _shard(tmp_path, "s1", "bo", settings="aaaa", shard="1/2")
    before = (whole / "ada" / store.RECORD_FILE).read_text()
    assert merge.main(shards=[first], out=whole, course=TOY_COURSE, quiet=True) == 2
    assert merge.NOT_A_MERGE.format(out=whole) in " ".join(capsys.readouterr().err.split())
    assert not (whole / "bo").exists()
    assert (whole / "ada" / store.RECORD_FILE).read_text() == before


def test_a_merge_adds_to_an_earlier_merge_of_the_same_settings_only(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    second = _shard(tmp_path, "s2", "bo", settings="aaaa", shard="2/2")
    other = _shard(tmp_path, "s2other", "bo", settings="bbbb", shard="2/2")
    out = tmp_path / "merged"
    assert merge.main(shards=[first], out=out, course=TOY_COURSE, quiet=True) == 3
    assert merge.main(shards=[other], out=out, course=TOY_COURSE, quiet=True) == 2
    assert "different settings" in " ".join(capsys.readouterr().err.split())
    assert merge.main(shards=[second], out=out, course=TOY_COURSE, quiet=True) == 1
    assert sorted(r.learner for r in store.read_records(out)) == ["ada", "bo"]
    assert "missing" not in capsys.readouterr().err  # shard 1 from before, shard 2 now
    assert "missing" not in (out / report.MARKDOWN_FILE).read_text()


def test_a_refused_merge_says_nothing_of_missing_shards(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    out = tmp_path / "merged"
    out.mkdir()
    with lock.hold(out, "grade-class"):
        assert merge.main(shards=[first], out=out, course=TOY_COURSE, quiet=True) == 2
    err = capsys.readouterr().err
    assert "is writing to" in err and "missing" not in err


def test_shards_uploaded_without_dot_files_still_say_their_run(tmp_path: Path, capsys) -> None:
    """actions/upload-artifact leaves out dot files: regrade.yml's shards used to arrive
    without DIR/.run.json, so a shard of no learner was refused and missing shards not said."""
    made = [
        _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/4"),
        _shard(tmp_path, "s2", None, settings="aaaa", shard="2/4"),
        _shard(tmp_path, "s3", "cy", settings="aaaa", shard="3/4"),
    ]
    uploaded = []
    for folder in made:
        copy = tmp_path / "artifacts" / folder.name
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(".*"))
        uploaded.append(copy)
    out = tmp_path / "merged"
    assert merge.main(shards=uploaded, out=out, course=TOY_COURSE, quiet=True) == 3
    said = report_model.MISSING_SHARDS.format(have="shards 1, 2, 3", count=4, missing="4")
    assert said in " ".join(capsys.readouterr().err.split())
    assert sorted(r.learner for r in store.read_records(out)) == ["ada", "cy"]


def test_a_shard_written_before_run_json_was_visible_is_read(tmp_path: Path) -> None:
    """Versions of 2026-12-01 wrote DIR/.run.json; their shards still merge by it."""
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    (first / store.RUN_FILE).rename(first / store.OLD_RUN_FILE)
    run = store.read_run(first)
    assert (run["shard"], run["settings"], run["merged"]) == ("1/2", "aaaa", [])


@pytest.mark.parametrize("written", ["a/b", "1/3/5", 1, "1/0", "4/3", None])
def test_a_malformed_shard_in_run_json_is_no_shard(tmp_path: Path, written) -> None:
    """H35: "a/b" or "1/3/5" crashed merge with a traceback and exit status 1."""
    folder = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    (folder / store.RUN_FILE).write_text(json.dumps({"shard": written, "settings": "aaaa"}))
    run = store.read_run(folder)
    assert (run["shard"], run["settings"], run["merged"]) == ("", "aaaa", [])
    out = tmp_path / "merged"
    assert merge.main(shards=[folder], out=out, course=TOY_COURSE, quiet=True) == 1


def test_an_older_runs_learner_named_run_json_does_not_hide_the_run(tmp_path: Path) -> None:
    folder = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    (folder / store.RUN_FILE).rename(folder / store.OLD_RUN_FILE)
    (folder / store.RUN_FILE).mkdir()  # a learner's folder, as versions before it allowed
    run = store.read_run(folder)
    assert (run["shard"], run["settings"], run["merged"]) == ("1/2", "aaaa", [])


def test_shards_of_other_splits_or_rosters_are_not_merged(tmp_path: Path, capsys) -> None:
    """H36 merged 2/2 with 1/4, and shards of two classes, and was told the class was whole."""
    half = _shard(tmp_path, "s2", "bo", settings="aaaa", shard="2/2")
    quarter = _shard(tmp_path, "q1", "ada", settings="aaaa", shard="1/4")
    out = tmp_path / "merged"
    assert merge.main(shards=[half, quarter], out=out, course=TOY_COURSE, quiet=True) == 2
    said = merge.OTHER_SPLITS.format(
        first=half, first_shard="2/2", second=quarter, second_shard="1/4"
    )
    assert said in " ".join(capsys.readouterr().err.split())
    mine = _shard(tmp_path, "m1", "ada", settings="aaaa", shard="1/2")
    theirs = _shard(tmp_path, "t2", "cy", settings="aaaa", shard="2/2")
    for folder, roster in ((mine, "r-one"), (theirs, "r-two")):
        store.write_run(folder, store.read_run(folder)["shard"], "aaaa", roster=roster)
    assert merge.main(shards=[mine, theirs], out=out, course=TOY_COURSE, quiet=True) == 2
    said = merge.OTHER_ROSTERS.format(first=mine, second=theirs)
    assert said in " ".join(capsys.readouterr().err.split())
    assert not out.exists()


def test_a_shard_whose_run_did_not_finish_is_said_until_merged_complete(
    tmp_path: Path, capsys
) -> None:
    """H36: a shard stopped by Ctrl-C after 5 of its 6 learners merged as a complete class."""
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    second = _shard(tmp_path, "s2", "bo", settings="aaaa", shard="2/2")
    store.write_run(second, "2/2", "aaaa", complete=False)  # as grade-class writes it at start
    out = tmp_path / "merged"
    assert merge.main(shards=[first, second], out=out, course=TOY_COURSE, quiet=True) == 3
    said = merge.INCOMPLETE.format(shards="2/2")
    assert said in " ".join(capsys.readouterr().err.split())
    note = report_model.UNFINISHED_SHARDS.format(shards="2/2")
    assert note in " ".join((out / report.MARKDOWN_FILE).read_text().split())
    store.write_run(second, "2/2", "aaaa", complete=True)  # its rerun finished
    assert merge.main(shards=[second], out=out, course=TOY_COURSE, quiet=True) == 1
    assert "did not finish" not in capsys.readouterr().err
    assert "did not finish" not in (out / report.MARKDOWN_FILE).read_text()


def test_a_shards_own_report_says_it_is_a_shard(tmp_path: Path) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    records = store.read_records(first)
    made = report.build_report(first, records, [], "Course")
    assert made.notes[0] == report_model.SHARD_NOTE.format(shard="1/2")


def test_a_shard_folder_that_does_not_exist_is_said_so(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    gone = tmp_path / "doesnotexist"
    out = tmp_path / "merged"
    assert merge.main(shards=[first, gone], out=out, course=TOY_COURSE, quiet=True) == 2
    assert capsys.readouterr().err.strip() == merge.NO_SUCH_SHARD.format(path=gone)


def test_a_learner_an_earlier_run_left_in_a_shard_folder_is_not_merged(tmp_path: Path) -> None:
    """H37: a shard graded into the folder of another roster's run merged that run's learners
    too, as a complete class."""
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    left = store.LearnerRecord(learner="zed", error="from another roster")
    store.commit_learner(first, store.staging_dir(first, "zed"), left)
    store.write_run(first, "1/2", "aaaa", learners=["ada"])
    second = _shard(tmp_path, "s2", "bo", settings="aaaa", shard="2/2")
    out = tmp_path / "merged"
    assert merge.main(shards=[first, second], out=out, course=TOY_COURSE, quiet=True) == 1
    assert sorted(r.learner for r in store.read_records(out)) == ["ada", "bo"]


def test_other_splits_are_said_before_a_learner_in_two_shards(tmp_path: Path, capsys) -> None:
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    other = _shard(tmp_path, "t2", "ada", settings="aaaa", shard="2/3")
    out = tmp_path / "merged"
    assert merge.main(shards=[first, other], out=out, course=TOY_COURSE, quiet=True) == 2
    assert "different splits" in capsys.readouterr().err


def test_a_whole_run_is_not_merged_with_shards_or_into_a_merge(tmp_path: Path, capsys) -> None:
    """H37: merged into an earlier merge, a whole run erased its list of shards."""
    whole = _shard(tmp_path, "whole", "ada", settings="aaaa", shard="")
    first = _shard(tmp_path, "s1", "bo", settings="aaaa", shard="1/2")
    out = tmp_path / "merged"
    assert merge.main(shards=[whole, first], out=out, course=TOY_COURSE, quiet=True) == 2
    assert merge.WHOLE_RUN.format(path=whole) in " ".join(capsys.readouterr().err.split())
    assert merge.main(shards=[first], out=out, course=TOY_COURSE, quiet=True) == 3
    assert merge.main(shards=[whole], out=out, course=TOY_COURSE, quiet=True) == 2
    assert store.read_run(out)["merged"] == ["1/2"]


def test_an_unfinished_whole_run_is_named_in_the_report(tmp_path: Path) -> None:
    """H37: an interrupted run that is no shard was said on stderr only (its label, a folder,
    was dropped from run.json when read back)."""
    whole = _shard(tmp_path, "whole", "ada", settings="aaaa", shard="")
    store.write_run(whole, "", "aaaa", complete=False)
    out = tmp_path / "merged"
    assert merge.main(shards=[whole], out=out, course=TOY_COURSE, quiet=True) == 3
    note = report_model.UNFINISHED_SHARDS.format(shards=str(whole))
    assert note in " ".join((out / report.MARKDOWN_FILE).read_text().split())


def test_a_learner_of_a_reserved_name_from_an_older_shard_is_refused(
    tmp_path: Path, capsys
) -> None:
    """H37: a learner named run.json (allowed before) crashed merge half way."""
    old = _shard(tmp_path, "s1", "run.json", settings="", shard="1/1", run=False)
    out = tmp_path / "merged"
    assert merge.main(shards=[old], out=out, course=TOY_COURSE, quiet=True) == 2
    said = merge.RESERVED.format(learner="run.json", shard=old)
    assert said in " ".join(capsys.readouterr().err.split())


def test_shards_of_one_deadline_written_in_other_words_are_merged(tmp_path: Path) -> None:
    """Shard 1 graded with --deadline ...T23:59:00+05:30, shard 2 with ...T18:29:00Z: their
    settings digests differ (the spelling is kept, so outputs already written keep theirs),
    their digests with the deadline as an instant do not (job.instant_settings)."""
    base = dict(
        course=TOY_COURSE, out=tmp_path, test_timeout=None, seed=0, run_id="r", parent_pid=1
    )
    india = JobSettings(deadline="2026-08-15T23:59:00+05:30", **base)
    utc = JobSettings(deadline="2026-08-15T18:29:00Z", **base)
    later = JobSettings(deadline="2026-08-15T18:30:00Z", **base)
    assert run_settings(india) != run_settings(utc)
    assert instant_settings(india) == instant_settings(utc) != instant_settings(later)
    first = _shard(tmp_path, "s1", "ada", settings=run_settings(india), shard="1/2")
    second = _shard(tmp_path, "s2", "bo", settings=run_settings(utc), shard="2/2")
    store.write_run(first, "1/2", run_settings(india), same_as=instant_settings(india))
    store.write_run(second, "2/2", run_settings(utc), same_as=instant_settings(utc))
    out = tmp_path / "merged"
    assert merge.main(shards=[first, second], out=out, course=TOY_COURSE, quiet=True) == 1
    assert [r.learner for r in store.read_records(out)] == ["ada", "bo"]  # error rows: status 1
    assert store.read_run(out)["same_as"] == instant_settings(utc)
    third = _shard(tmp_path, "s3", "cy", settings=run_settings(later), shard="2/2")
    store.write_run(third, "2/2", run_settings(later), same_as=instant_settings(later))
    again = tmp_path / "again"
    assert merge.main(shards=[first, third], out=again, course=TOY_COURSE, quiet=True) == 2


def test_learners_an_unfinished_shard_did_not_reach_get_a_row_saying_so(tmp_path: Path) -> None:
    """H41: merging a shard whose run was interrupted left its ungraded learners without a row
    (grade-class itself now gives them one)."""
    first = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    store.write_run(first, "1/2", "aaaa", complete=False, learners=["ada", "bo"])
    second = _shard(tmp_path, "s2", "cy", settings="aaaa", shard="2/2")
    out = tmp_path / "merged"
    assert merge.main(shards=[first, second], out=out, course=TOY_COURSE, quiet=True) == 3
    rows = {row["learner"]: row["errors"] for row in read_gradebook(out / store.GRADEBOOK_FILE)}
    assert rows == {
        "ada": "Its repository is empty.",
        "bo": merge.SHARD_NOT_DONE.format(learner="bo"),
        "cy": "Its repository is empty.",
    }
    assert [r.learner for r in store.read_records(out)] == ["ada", "cy"]  # no record for bo


def _roster_shard(tmp_path: Path, index: int, learners: list[str], everyone: list[str]) -> Path:
    """Shard index/2 of `everyone`, holding `learners`' rows, its run.json listing the roster."""
    folder = tmp_path / f"s{index}"
    for learner in learners:
        record = store.LearnerRecord(
            learner=learner, error="Its repository is empty.", settings="aaaa", shard=f"{index}/2"
        )
        store.commit_learner(folder, store.staging_dir(folder, learner), record)
    store.write_run(folder, f"{index}/2", "aaaa", learners=learners, everyone=everyone)
    return folder


def test_the_learners_of_a_shard_not_given_get_a_row_saying_so(tmp_path: Path) -> None:
    """H47: merging shard 1/2 alone left shard 2's learners out of the gradebook, and the report
    counted the class as half its size."""
    everyone = ["ada", "bo", "cy", "dee"]  # shard 1/2: ada, cy; 2/2: bo, dee
    first = _roster_shard(tmp_path, 1, ["ada", "cy"], everyone)
    out = tmp_path / "merged"
    assert merge.main(shards=[first], out=out, course=TOY_COURSE, quiet=True) == 3
    rows = {row["learner"]: row["errors"] for row in read_gradebook(out / "gradebook.csv")}
    assert rows == {
        "ada": "Its repository is empty.",
        "bo": merge.SHARD_NOT_GIVEN.format(learner="bo", shard="2/2"),
        "cy": "Its repository is empty.",
        "dee": merge.SHARD_NOT_GIVEN.format(learner="dee", shard="2/2"),
    }
    assert not (out / "bo").exists()  # a row only: nothing is saved for them
    second = _roster_shard(tmp_path, 2, ["bo", "dee"], everyone)
    assert merge.main(shards=[second], out=out, course=TOY_COURSE, quiet=True) == 1
    rows = {row["learner"]: row["errors"] for row in read_gradebook(out / "gradebook.csv")}
    assert rows == dict.fromkeys(everyone, "Its repository is empty.")


def test_a_shard_without_run_json_is_known_by_its_records(tmp_path: Path, capsys) -> None:
    """H48: shard 1/2 whose run.json was lost merged alone as a complete class (exit 0); its
    records say 1/2, so shard 2 is missing."""
    folder = _shard(tmp_path, "s1", "ada", settings="aaaa", shard="1/2")
    (folder / store.RUN_FILE).unlink()
    out = tmp_path / "merged"
    assert merge.main(shards=[folder], out=out, course=TOY_COURSE, quiet=True) == 3
    said = report_model.MISSING_SHARDS.format(have="shard 1", count=2, missing="2")
    assert said in " ".join(capsys.readouterr().err.split())


def test_shards_graded_otherwise_are_told_what_differs(tmp_path: Path, capsys) -> None:
    """H49: merge named every setting it compares, though run.json says which one differs."""
    options = {"--deadline": "", "--timeout": "10.0", "--seed": "0", "--manifest": ""}
    folders = []
    for index, (settings, seed) in enumerate((("aaaa", "0"), ("bbbb", "7")), start=1):
        folder = tmp_path / f"s{index}"
        folder.mkdir()
        given = {**options, "--seed": seed}
        store.write_run(folder, f"{index}/2", settings, learners=[], options=given)
        folders.append(folder)
    out = tmp_path / "merged"
    assert merge.main(shards=folders, out=out, course=TOY_COURSE, quiet=True) == 2
    what = f"--seed 0 in {folders[0]}, 7 in {folders[1]}"
    said = merge.MIXED.format(first=folders[0], second=folders[1], what=what)
    assert " ".join(capsys.readouterr().err.split()) == said
