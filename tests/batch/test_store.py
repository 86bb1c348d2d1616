"""Per-learner records, their atomic folders and the gradebook CSV rebuilt from them."""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder.gradebook import store
from autograder.gradebook.store import LearnerRecord

COMPONENTS = ["scale", "normalize"]


def _record(learner: str, **fields) -> LearnerRecord:
    return LearnerRecord(learner=learner, **fields)


def test_the_gradebook_has_a_row_per_record_in_learner_order_with_every_column() -> None:
    records = [
        _record("zed", error="The repository /r/zed is empty.", duration_s=0.04),
        _record(
            "amy",
            commit="abc123",
            commit_time="2026-08-10T12:00:00+00:00",
            late=True,
            components={"scale": 10.0, "normalize": 2.5},
            total=12.5,
            max_score=15.0,
            tamper=["changed tests/x.py", "added tests/conftest.py"],
            review=[
                "toypkg/scale.py line 3: eval(...) reaches code the grader cannot read from the "
                "source."
            ],
            duration_s=3.21,
            graded_at="2026-08-16T00:00:00+00:00",
        ),
    ]
    assert store.render_gradebook(records, COMPONENTS) == (
        "learner,commit,commit_time,late,scale,normalize,total,max_score,tamper,review,errors,"
        "duration_s,graded_at\n"
        "amy,abc123,2026-08-10T12:00:00+00:00,yes,10.00,2.50,12.50,15.00,"
        "changed tests/x.py; added tests/conftest.py,toypkg/scale.py line 3: eval(...) reaches "
        "code the grader cannot read from the source.,,3.2,2026-08-16T00:00:00+00:00\n"
        "zed,,,,,,,,,,The repository /r/zed is empty.,,\n"  # never graded: no time either
    )


def test_a_committed_learner_folder_replaces_the_old_one_whole(tmp_path: Path) -> None:
    first = store.staging_dir(tmp_path, "amy")
    (first / "results.json").write_text("old")
    (first / "stale.txt").write_text("only in the old run")
    store.commit_learner(tmp_path, first, _record("amy", total=1.0))
    second = store.staging_dir(tmp_path, "amy")
    (second / "results.json").write_text("new")
    store.commit_learner(tmp_path, second, _record("amy", total=2.0))
    folder = tmp_path / "amy"
    assert sorted(p.name for p in folder.iterdir()) == ["record.json", "results.json"]
    assert (folder / "results.json").read_text() == "new"
    assert store.read_record(tmp_path, "amy").total == 2.0
    assert list((tmp_path / ".partial").iterdir()) == []


def test_half_written_folders_are_never_read_and_are_cleared(tmp_path: Path) -> None:
    staged = store.staging_dir(tmp_path, "amy")  # a run killed before its rename
    (staged / "record.json").write_text(_record("amy").to_json())
    (tmp_path / "bo").mkdir()  # a folder without its record is not a result
    (tmp_path / "cy").mkdir()
    (tmp_path / "cy" / "record.json").write_text("{not json")
    assert store.read_records(tmp_path) == []
    assert store.read_record(tmp_path, "amy") is None
    store.clear_partial(tmp_path)
    assert not (tmp_path / ".partial").exists()


def test_a_copy_of_a_learners_folder_under_another_name_is_no_row(tmp_path: Path) -> None:
    """H48: a backup copy (amara.bak, made before a --regrade) gave amara two rows."""
    store.commit_learner(tmp_path, store.staging_dir(tmp_path, "amy"), _record("amy", total=3.0))
    shutil.copytree(tmp_path / "amy", tmp_path / "amy.bak")
    assert store.read_records(tmp_path) == [_record("amy", total=3.0)]
    assert store.read_record(tmp_path, "amy.bak") is None
    store.write_gradebook(tmp_path, COMPONENTS)
    lines = (tmp_path / "gradebook.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in lines] == ["learner", "amy"]


def test_the_gradebook_is_rebuilt_from_the_records_of_the_roster_only(tmp_path: Path) -> None:
    for name, total in (("amy", 3.0), ("bo", 4.0), ("gone", 5.0)):
        store.commit_learner(
            tmp_path, store.staging_dir(tmp_path, name), _record(name, total=total)
        )
    records = store.write_gradebook(tmp_path, COMPONENTS, ["bo", "amy"])
    assert [r.learner for r in records] == ["amy", "bo"]
    lines = (tmp_path / "gradebook.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in lines] == ["learner", "amy", "bo"]
    assert store.read_records(tmp_path)[2] == _record("gone", total=5.0)


def test_grader_bytecode_is_cached_in_the_output_folder_when_writing_is_off(
    tmp_path: Path, monkeypatch
) -> None:
    import sys

    from autograder.grading import bytecode as job

    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    kept = len(job._KEPT)
    try:
        job.cache_bytecode(tmp_path)
        assert sys.dont_write_bytecode is False
        assert sys.pycache_prefix == str(tmp_path / ".pycache")
        assert store.read_records(tmp_path) == []  # a dot folder is never a learner
    finally:  # the process-long recompile hook must not outlive this test (later tests patch it)
        while len(job._KEPT) > kept:
            job._KEPT.pop().__exit__(None, None, None)
