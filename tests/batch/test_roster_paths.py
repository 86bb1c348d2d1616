"""Roster CSV rows whose repository path cannot be followed: that row's error, not a traceback
that stops the whole class; a roster that is not UTF-8 text: a sentence naming it; an output
folder inside a roster folder: refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.gradebook.roster import RosterError, read_roster
from tests.batch.conftest import TOY_COURSE, run_cli


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


def test_an_output_folder_inside_a_roster_folder_is_refused(tmp_path: Path) -> None:
    """Its next run would grade the output folder as one more learner."""
    roster = tmp_path / "class"
    (roster / "ada").mkdir(parents=True)
    out = roster / "grades"
    done = run_cli(
        "grade-class", str(roster), "--out", str(out), "--course", str(TOY_COURSE), "-q",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"--out {out} is inside the roster folder {roster}, where every folder is a learner's "
        "repository; choose an output folder outside it."
    )
    assert not out.exists()
