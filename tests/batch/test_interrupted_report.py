"""A Ctrl-C of grade-class once every learner is saved (while the gradebook and the class report
are written) says so and that a rerun writes them; it ended with the command line's 'Interrupted
before anything was graded', which is wrong then."""

from __future__ import annotations

import pytest

from autograder.commands import grade_class
from autograder.gradebook import store

from .conftest import grade_class_main


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize("stage", ["finish", "grade_pending"])
def test_ctrl_c_with_every_learner_saved(tmp_path, monkeypatch, capsys, stage):
    roster, out = tmp_path / "roster", tmp_path / "out"
    for learner in ("ada", "bo"):
        (roster / learner).mkdir(parents=True)
        out.mkdir(exist_ok=True)
        record = store.LearnerRecord(learner=learner, total=1.0)
        store.commit_learner(out, store.staging_dir(out, learner), record)
    monkeypatch.setattr(grade_class, "grade_pending", lambda *args, **kwargs: None)
    monkeypatch.setattr(grade_class, stage, _interrupt)
    assert grade_class_main(roster, out) == 130
    err = capsys.readouterr().err
    assert err == (
        "Interrupted while writing the gradebook and the class report: all 2 learners are saved "
        f"in {out}; run the same command again to write them.\n"
    )


def test_ctrl_c_with_learners_left_says_how_many_are_saved(tmp_path, monkeypatch, capsys):
    roster, out = tmp_path / "roster", tmp_path / "out"
    for learner in ("ada", "bo"):
        (roster / learner).mkdir(parents=True)
    out.mkdir()
    store.commit_learner(out, store.staging_dir(out, "ada"), store.LearnerRecord(learner="ada"))
    monkeypatch.setattr(grade_class, "grade_pending", _interrupt)
    assert grade_class_main(roster, out) == 130
    said = grade_class.INTERRUPTED.format(done=1, total=2, out=out)
    assert capsys.readouterr().err == said + "\n"
