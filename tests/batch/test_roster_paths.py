"""Roster CSV rows whose repository path cannot be followed: that row's error, not a traceback
that stops the whole class."""

from __future__ import annotations

from pathlib import Path

from autograder.gradebook.roster import read_roster


def test_a_symbolic_link_loop_is_that_rows_error(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "fine").mkdir()
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "learner,repo\nlooped,loop\nvia_url,file://" + str(tmp_path / "loop") + "\nok,fine\n"
    )
    learners = {learner.id: learner for learner in read_roster(roster)}
    assert learners["ok"].repo == (tmp_path / "fine").resolve()
    for name in ("looped", "via_url"):
        assert learners[name].repo is None
        assert learners[name].error.startswith(f"The repository path {tmp_path / 'loop'} cannot")
        assert learners[name].error.endswith("; fix it in the roster.")
