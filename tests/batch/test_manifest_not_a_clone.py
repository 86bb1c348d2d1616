"""grade-class --manifest on a repository that is not a clone of the release: the tamper cell
says so in one sentence, and the learner's results.json keeps every missing file."""

from __future__ import annotations

import json

from autograder.gradebook.tamper import MANY_MISSING, MISSING_LIST_LIMIT, protected_tamper
from tests.batch.conftest import (
    BEFORE,
    TOY,
    TOY_COURSE,
    commit_all,
    copy_package,
    init_repo,
    read_gradebook,
    run_cli,
)


def _change(path: str, got: str = "missing") -> dict[str, str]:
    return {"path": path, "expected": "0" * 64, "got": got, "sentence": ""}


def test_a_few_missing_files_are_listed_one_by_one():
    changes = [_change("a.py", "1" * 64), _change("b.py"), _change("c.py", "2" * 64)]
    entries = protected_tamper(changes, ["changed c.py"], total=9, learner="kim")
    assert entries == ["changed a.py", "missing b.py"]  # c.py was already flagged


def test_many_missing_files_are_one_sentence_and_changed_ones_stay_listed():
    missing = [_change(f"f{i}.py") for i in range(MISSING_LIST_LIMIT + 1)]
    entries = protected_tamper([_change("a.py", "1" * 64), *missing], [], total=40, learner="kim")
    assert entries == [
        "changed a.py",
        "6 of 40 protected files missing, each listed in kim/results.json (not a clone of the "
        "release?)",
    ]


def test_grade_class_on_a_repository_that_is_not_a_release_clone(tmp_path):
    roster = tmp_path / "class"
    solo = roster / "solo"
    init_repo(solo)
    copy_package(TOY / "solution", solo)
    commit_all(solo, "done", BEFORE)
    protected = [f"release/file{i}.txt" for i in range(12)]
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"format": 1, "protected": dict.fromkeys(protected, "0" * 64)}))
    out = tmp_path / "out"
    done = run_cli(
        "grade-class",
        str(roster),
        "--out",
        str(out),
        "--course",
        str(TOY_COURSE),
        "--manifest",
        str(manifest),
        "--jobs",
        "1",
        "-q",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    sentence = MANY_MISSING.format(missing=12, total=12, learner="solo")
    (row,) = read_gradebook(out / "gradebook.csv")
    assert row["tamper"] == sentence
    assert f"- `solo`: {sentence}" in (out / "report.md").read_text(encoding="utf-8")
    results = json.loads((out / "solo" / "results.json").read_text(encoding="utf-8"))
    listed = results["extra_data"]["protected_files_changed"]
    assert [c["path"] for c in listed] == sorted(protected)
    assert {c["got"] for c in listed} == {"missing"}
