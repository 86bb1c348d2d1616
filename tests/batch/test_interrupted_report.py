"""A Ctrl-C of grade-class once every learner is saved (while the gradebook and the class report
are written) says so and that a rerun writes them; it ended with the command line's 'Interrupted
before anything was graded', which is wrong then."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from autograder.commands import grade_class
from autograder.gradebook import class_output, report, store
from autograder.gradebook.settings import settings_key

from .conftest import grade_class_main, read_gradebook


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def _saving(*learners: str, then_interrupt: bool, seen: list | None = None):
    """A grade_pending that saves these learners (of those pending) as this run's, as the
    real one would, then is interrupted or not; ``seen`` gets the ids of the pending ones."""

    def grade_pending(settings, pending, *args, **kwargs):
        if seen is not None:
            seen.append([learner.id for learner in pending])
        for learner in pending:
            if learner.id not in learners:
                continue
            record = store.LearnerRecord(
                learner=learner.id,
                total=1.0,
                run_id=settings.run_id,
                key=settings_key(settings, learner),
                graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
            )
            store.commit_learner(settings.out, store.staging_dir(settings.out, learner.id), record)
        if then_interrupt:
            raise KeyboardInterrupt

    return grade_pending


def _class(tmp_path):
    roster, out = tmp_path / "roster", tmp_path / "out"
    for learner in ("ada", "bo"):
        (roster / learner).mkdir(parents=True)
    out.mkdir()
    return roster, out


@pytest.mark.parametrize("stage", ["finish", "grade_pending"])
def test_ctrl_c_with_every_learner_saved(tmp_path, monkeypatch, capsys, stage):
    roster, out = _class(tmp_path)
    saving = _saving("ada", "bo", then_interrupt=stage == "grade_pending")
    monkeypatch.setattr(grade_class, "grade_pending", saving)
    if stage == "finish":
        monkeypatch.setattr(class_output, "finish", _interrupt)
    assert grade_class_main(roster, out) == 130
    err = capsys.readouterr().err
    assert err == (
        "Interrupted while writing the gradebook and the class report: all 2 learners are saved "
        f"in {out}; run the same command again to write them.\n"
    )


def test_ctrl_c_with_learners_left_says_how_many_are_saved(tmp_path, monkeypatch, capsys):
    roster, out = _class(tmp_path)
    monkeypatch.setattr(grade_class, "grade_pending", _saving("ada", then_interrupt=True))
    assert grade_class_main(roster, out) == 130
    said = grade_class.INTERRUPTED.format(done=1, total=2, out=out)
    assert capsys.readouterr().err == said + "\n"


@pytest.mark.parametrize("force", [False, True])
def test_a_record_this_run_grades_again_is_not_counted_as_saved(
    tmp_path, monkeypatch, capsys, force
):
    """bo's record is from an earlier run with other settings (or --force regrades it): while
    this run has not graded bo yet, bo is not saved (H32 was told 'all 2 learners are saved')."""
    roster, out = _class(tmp_path)
    old = store.LearnerRecord(learner="bo", total=1.0, run_id="earlier", key="other-settings")
    store.commit_learner(out, store.staging_dir(out, "bo"), old)
    monkeypatch.setattr(grade_class, "grade_pending", _saving("ada", then_interrupt=True))
    assert grade_class_main(roster, out, force=force) == 130
    template = grade_class.INTERRUPTED_FORCED if force else grade_class.INTERRUPTED
    assert template.format(done=1, total=2, out=out) in capsys.readouterr().err


def test_a_rerun_without_force_goes_on_from_an_interrupted_force_run(tmp_path, monkeypatch, capsys):
    """H33: after a --force run stopped halfway, the advised rerun without --force kept every
    record of the run before it (same settings): most learners stayed at their old commits."""
    roster, out = _class(tmp_path)
    seen: list[list[str]] = []
    monkeypatch.setattr(grade_class, "grade_pending", _saving("ada", "bo", then_interrupt=False))
    assert grade_class_main(roster, out) == 0
    time.sleep(1.1)  # records keep their time to the second
    monkeypatch.setattr(grade_class, "grade_pending", _saving("ada", then_interrupt=True))
    assert grade_class_main(roster, out, force=True) == 130
    said = grade_class.INTERRUPTED_FORCED.format(done=1, total=2, out=out)
    assert said in capsys.readouterr().err
    saving = _saving("ada", "bo", then_interrupt=False, seen=seen)
    monkeypatch.setattr(grade_class, "grade_pending", saving)
    assert grade_class_main(roster, out) == 0
    assert grade_class_main(roster, out) == 0
    assert seen == [["bo"], []]  # the rest of the forced run, then nothing: it is complete


def test_ctrl_c_rebuilds_the_gradebook_from_the_folders_and_says_so(tmp_path, monkeypatch):
    """H34: after a Ctrl-C, gradebook.csv and report.md showed the last finished run while the
    learners' folders held this one's grades. Now they show the folders, and say the run was
    interrupted, until a run finishes."""
    roster, out = _class(tmp_path)
    monkeypatch.setattr(grade_class, "grade_pending", _saving("ada", "bo", then_interrupt=False))
    assert grade_class_main(roster, out) == 0
    before = {row["learner"]: row["graded_at"] for row in _rows(out)}
    time.sleep(1.1)  # records keep their time to the second
    monkeypatch.setattr(grade_class, "grade_pending", _saving("ada", then_interrupt=True))
    assert grade_class_main(roster, out, force=True) == 130
    after = {row["learner"]: row["graded_at"] for row in _rows(out)}
    assert after["ada"] > before["ada"] and after["bo"] == before["bo"]
    note = grade_class.INTERRUPTED_NOTE.format(
        done=1, total=2, left="bo", without=" without --force"
    )
    assert note in " ".join((out / report.MARKDOWN_FILE).read_text().split())
    monkeypatch.setattr(grade_class, "grade_pending", _saving("ada", "bo", then_interrupt=False))
    assert grade_class_main(roster, out) == 0
    assert "interrupted" not in (out / report.MARKDOWN_FILE).read_text()


def test_a_ctrl_c_before_anything_is_saved_gives_each_learner_a_row_that_says_so(
    tmp_path, monkeypatch
):
    """The gradebook of an interrupted run has a row for every learner of the roster (it had
    none for those not graded yet: only report.md said they were missing)."""
    roster, out = _class(tmp_path)
    monkeypatch.setattr(grade_class, "grade_pending", _saving(then_interrupt=True))
    assert grade_class_main(roster, out) == 130
    assert [(row["learner"], row["total"], row["errors"]) for row in _rows(out)] == [
        (learner, "", grade_class.NOT_GRADED_YET.format(learner=learner))
        for learner in ("ada", "bo")
    ]
    note = grade_class.INTERRUPTED_NOTE.format(done=0, total=2, left="ada, bo", without="")
    assert note in " ".join((out / report.MARKDOWN_FILE).read_text().split())
    monkeypatch.setattr(grade_class, "grade_pending", _saving("ada", "bo", then_interrupt=False))
    assert grade_class_main(roster, out) == 0
    assert [(row["learner"], row["total"], row["errors"]) for row in _rows(out)] == [
        ("ada", "1.00", ""),
        ("bo", "1.00", ""),
    ]


def test_a_ctrl_c_halfway_keeps_the_graded_rows_and_marks_the_others(tmp_path, monkeypatch):
    roster, out = _class(tmp_path)
    monkeypatch.setattr(grade_class, "grade_pending", _saving("ada", then_interrupt=True))
    assert grade_class_main(roster, out) == 130
    assert [(row["learner"], row["total"], row["errors"]) for row in _rows(out)] == [
        ("ada", "1.00", ""),
        ("bo", "", grade_class.NOT_GRADED_YET.format(learner="bo")),
    ]


def test_learners_not_graded_yet_are_not_listed_as_errored(tmp_path, monkeypatch):
    """H42: after a Ctrl-C the class report listed the learners not graded yet under "Learners
    whose grading errored"; they have a section of their own, and the Learners table says "not
    graded yet" (a learner whose grading errored says it erred)."""
    roster, out = _class(tmp_path)
    (roster / "cy").mkdir()
    saving = _saving("ada", "cy", then_interrupt=False)

    def grade_pending(settings, pending, *args, **kwargs):
        saving(settings, pending)
        cy = store.read_record(out, "cy")
        cy.error, cy.total = "Its repository is empty.", None
        store.commit_learner(out, store.staging_dir(out, "cy"), cy)
        raise KeyboardInterrupt

    monkeypatch.setattr(grade_class, "grade_pending", grade_pending)
    assert grade_class_main(roster, out) == 130
    text = (out / report.MARKDOWN_FILE).read_text()
    errored = _section(text, "Learners whose grading errored")
    assert errored == ["- `cy`: Its repository is empty."]
    assert _section(text, "Learners not graded yet") == [
        f"- `bo`: {grade_class.NOT_GRADED_YET.format(learner='bo')}",
    ]
    learners = _section(text, "Learners")
    assert "| `bo` |  |  | not graded yet |" in learners  # no folder yet: no link
    assert "| [`ada`](ada/summary.md) | 0.00 | 0.00 | 1.00 |" in learners
    html = (out / report.HTML_FILE).read_text()
    assert "<h2>Learners not graded yet</h2>" in html
    assert "| [`cy`](cy/summary.md) |  |  | error (see the errored learners) |" in learners
    monkeypatch.setattr(grade_class, "grade_pending", _saving("bo", then_interrupt=False))
    assert grade_class_main(roster, out) == 1  # cy's row carries an error
    assert "not graded yet" not in (out / report.MARKDOWN_FILE).read_text().lower()


def _section(text: str, title: str) -> list[str]:
    """The non-empty lines of report.md's section `title`."""
    body = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.strip()]


def _rows(out):
    return read_gradebook(out / store.GRADEBOOK_FILE, drop_timing=False)
