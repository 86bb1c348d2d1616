"""Roster CSV rows whose repository path cannot be followed: that row's error, not a traceback
that stops the whole class; a roster that is not UTF-8 text: a sentence naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.gradebook.roster import RosterError, read_roster


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


def test_a_roster_that_is_not_utf8_text_is_named_in_a_sentence(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_bytes(b"learner,repo\n\xff\xfe,fine\n")
    with pytest.raises(RosterError) as raised:
        read_roster(roster)
    assert str(raised.value).startswith(f"The roster {roster} is not UTF-8 text (")
    assert str(raised.value).endswith("; save it as a UTF-8 CSV file.")
