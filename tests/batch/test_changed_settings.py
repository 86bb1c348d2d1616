"""A rerun into DIR with other settings than its grades were made with is refused unless --force
(H47: a forgotten --deadline, even with --regrade, regraded the whole class at HEAD and replaced
the authoritative gradebook; the only warning was a line among the progress output)."""

from __future__ import annotations

import json
import shutil
import time
from datetime import UTC, datetime

from autograder.commands import grade_class
from autograder.config import load_course
from autograder.gradebook import changed_settings, contents, store
from autograder.gradebook.settings import run_settings, settings_key
from autograder.release.manifest import FORMAT

from .conftest import TOY, TOY_COURSE, grade_class_main

DEADLINE = "2026-08-15T23:59:00+05:30"


def _class(tmp_path):
    """Two learners whose folders hold no package: each run gives them an error row, made with
    that run's settings, as a grade would be."""
    roster, out = tmp_path / "roster", tmp_path / "out"
    for learner in ("ada", "bo"):
        (roster / learner).mkdir(parents=True)
    return roster, out


def _folders(out):
    return {
        name: (out / name / store.RECORD_FILE).read_text(encoding="utf-8") for name in ("ada", "bo")
    }


def _refused(out, differences: str) -> str:
    count = "2 learners"
    return changed_settings.REFUSED.format(out=out, learners=count, differences=differences)


def test_another_seed_is_refused_and_keeps_every_grade(tmp_path, capsys):
    roster, out = _class(tmp_path)
    assert grade_class_main(roster, out) == 1
    before, gradebook = _folders(out), (out / "gradebook.csv").read_text(encoding="utf-8")
    capsys.readouterr()
    assert grade_class_main(roster, out, seed=7) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert said == _refused(out.resolve(), "--seed 0 there, 7 here")
    assert _folders(out) == before
    assert (out / "gradebook.csv").read_text(encoding="utf-8") == gradebook


def test_a_forgotten_deadline_is_refused_even_with_regrade(tmp_path, capsys):
    roster, out = _class(tmp_path)
    assert grade_class_main(roster, out, deadline=DEADLINE) == 1
    before = _folders(out)
    capsys.readouterr()
    assert grade_class_main(roster, out, regrade=["ada"]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert said == _refused(out.resolve(), f"--deadline {DEADLINE} there, none here")
    assert _folders(out) == before


def test_force_grades_everyone_with_the_new_settings(tmp_path):
    roster, out = _class(tmp_path)
    assert grade_class_main(roster, out, seed=3) == 1
    assert grade_class_main(roster, out, test_timeout=5.0, force=True) == 1
    records = store.read_records(out)
    assert len({r.settings for r in records}) == 1
    options = json.loads((out / store.RUN_FILE).read_text())["options"]
    parts = contents.course_parts(load_course(TOY_COURSE))
    assert options == {
        "--deadline": "",
        "--timeout": "5.0",
        "--seed": "0",
        "--manifest": "",
        "--course": str(TOY_COURSE),
        **{name: digest[:12] for name, digest in parts.items()},
    }
    assert grade_class_main(roster, out, test_timeout=5.0) == 1  # the same settings: kept


def test_a_folder_of_an_older_version_names_what_its_records_tell(tmp_path, capsys):
    """run.json without the options (written before them): the records' deadline is named;
    other differences only as a kind."""
    roster, out = _class(tmp_path)
    assert grade_class_main(roster, out, deadline=DEADLINE) == 1
    run = json.loads((out / store.RUN_FILE).read_text())
    del run["options"]
    (out / store.RUN_FILE).write_text(json.dumps(run))
    capsys.readouterr()
    later = "2026-08-16T23:59:00+05:30"
    assert grade_class_main(roster, out, deadline=later) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert said == _refused(out.resolve(), f"--deadline {DEADLINE} there, {later} here")
    assert grade_class_main(roster, out, deadline=DEADLINE, seed=9) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert said == _refused(out.resolve(), changed_settings.UNNAMED)


def test_the_same_deadline_written_otherwise_is_not_another_setting(tmp_path):
    roster, out = _class(tmp_path)
    assert grade_class_main(roster, out, deadline=DEADLINE) == 1
    before = _folders(out)
    assert grade_class_main(roster, out, deadline="2026-08-15T18:29:00Z") == 1
    assert _folders(out) == before


def test_regrade_with_force_is_refused(tmp_path, capsys):
    roster, out = _class(tmp_path)
    assert grade_class_main(roster, out, regrade=["ada"], force=True) == 2
    assert capsys.readouterr().err == grade_class.REGRADE_AND_FORCE + "\n"
    assert not out.exists() or not (out / "gradebook.csv").exists()


def test_the_rerun_of_an_interrupted_force_run_goes_on_with_its_settings(
    tmp_path, monkeypatch, capsys
):
    """--force with a new seed stopped after ada: bo's record of the old seed is older than the
    forced run, so the rerun without --force grades bo instead of refusing."""
    roster, out = _class(tmp_path)
    assert grade_class_main(roster, out) == 1
    time.sleep(1.1)  # records keep their time to the second
    real = grade_class.grade_pending

    def ada_then_ctrl_c(settings, pending, *args, **kwargs):
        [ada] = [learner for learner in pending if learner.id == "ada"]
        record = store.LearnerRecord(
            learner="ada",
            total=1.0,
            run_id=settings.run_id,
            key=settings_key(settings, ada),
            settings=run_settings(settings),
            graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        store.commit_learner(settings.out, store.staging_dir(settings.out, "ada"), record)
        raise KeyboardInterrupt

    monkeypatch.setattr(grade_class, "grade_pending", ada_then_ctrl_c)
    assert grade_class_main(roster, out, seed=7, force=True) == 130
    monkeypatch.setattr(grade_class, "grade_pending", real)
    capsys.readouterr()
    assert grade_class_main(roster, out, seed=7) == 1
    assert "holds the grades" not in capsys.readouterr().err
    assert {r.learner: r.total for r in store.read_records(out)} == {"ada": 1.0, "bo": None}
    assert len({r.settings for r in store.read_records(out)}) == 1


def test_an_edited_course_is_another_setting(tmp_path, capsys):
    """H48: a course.toml with other points kept every earlier grade, and shards graded with
    it merged into one gradebook with totals out of 100 and of 130."""
    roster, out = _class(tmp_path)
    course = tmp_path / "course"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__"))
    toml = course / "course.toml"
    assert grade_class_main(roster, out, course=toml) == 1
    toml.write_text(toml.read_text().replace("points = 10", "points = 40", 1))
    capsys.readouterr()
    assert grade_class_main(roster, out, course=toml) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert said == _refused(out.resolve(), "the course's course.toml differs")
    (course / "tests" / "graders" / "visible" / "extra.py").write_text("# an edited grader\n")
    (course / "solution" / "toypkg" / "extra.py").write_text("# an edited reference\n")
    assert grade_class_main(roster, out, course=toml) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert said.endswith(
        "(the course's course.toml, graders and references differ); this run would grade them "
        "again and replace those rows. Run the command with the same settings to go on, add "
        "--force to grade everyone again with these, or give another --out."
    )


def test_the_course_timeout_given_as_an_option_is_the_same_setting(tmp_path):
    roster, out = _class(tmp_path)
    assert grade_class_main(roster, out) == 1
    before = _folders(out)
    assert grade_class_main(roster, out, test_timeout=10.0) == 1  # course.toml's own: kept
    assert _folders(out) == before


def test_a_manifest_is_its_bytes_not_its_path(tmp_path, capsys):
    roster, out = _class(tmp_path)
    first, second = tmp_path / "a" / "manifest.json", tmp_path / "b" / "manifest.json"
    text = json.dumps({"format": FORMAT, "protected": {}})
    for path in (first, second):
        path.parent.mkdir()
        path.write_text(text)
    assert grade_class_main(roster, out, manifest=first) == 1
    before = _folders(out)
    assert grade_class_main(roster, out, manifest=second) == 1  # the same bytes: kept
    assert _folders(out) == before
    second.write_text(json.dumps({"format": FORMAT, "protected": {"tests/x.py": "0" * 64}}))
    capsys.readouterr()
    assert grade_class_main(roster, out, manifest=second) == 2  # edited in place
    assert "--manifest" in capsys.readouterr().err
