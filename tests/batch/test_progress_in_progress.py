"""grade-class's progress bar names the learners being graded and for how long, so a learner
stuck at the test time-out is seen by name (not only as a bar that stands still)."""

from __future__ import annotations

import io
import os
import shutil
import uuid

from rich.console import Console

from autograder.batch.launch import grade_pending
from autograder.commands import grade_class
from autograder.gradebook import store
from autograder.gradebook.roster import Learner
from autograder.gradebook.settings import JobSettings
from autograder.progress.in_progress import InProgress
from tests.batch.conftest import (
    BEFORE,
    TOY,
    TOY_COURSE,
    commit_all,
    copy_package,
    grade_class_main,
    init_repo,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_learners_with_a_partial_folder_are_named_longest_first(tmp_path):
    partial = tmp_path / ".partial"
    partial.mkdir()
    clock = Clock()
    ids = ["ada", "ben", "cy", "dee", "kofi", "old-x"]
    running = InProgress(tmp_path, ids, clock)
    running.refresh()
    assert running.describe() == ""  # nobody yet
    (partial / "kofi.0123abcd").mkdir()
    (partial / "old-ada.89abcdef").mkdir()  # an old folder being replaced: no learner's
    (partial / "stranger.01234567").mkdir()  # not one of the learners being graded
    running.refresh()
    clock.now += 65
    (partial / "ben.deadbeef").mkdir()
    running.refresh()
    clock.now += 3
    assert running.describe() == "now: kofi 1:08, ben 0:03"
    for name in ("ada.00000000", "cy.11111111", "dee.22222222"):
        (partial / name).mkdir()
    running.refresh()
    assert running.describe() == "now: kofi 1:08, ben 0:03, ada 0:00, +2 more"
    (partial / "kofi.0123abcd").rename(tmp_path / "kofi")  # committed
    running.refresh()
    assert running.describe().startswith("now: ben 0:03, ada 0:00, cy 0:00")
    running.clear()
    assert running.describe() == ""


def test_a_regraded_learners_old_folder_is_no_learner_in_progress(tmp_path):
    """store.commit_learner moves a learner's previous folder aside into DIR/.partial; with
    the learner 'old-x' in the roster, the old folder of 'x' must not name them."""
    running = InProgress(tmp_path, ["x", "old-x"], Clock())
    trash = store.trash_dir(tmp_path, "x")
    trash.mkdir(parents=True)
    running.refresh()
    assert running.describe() == ""
    (tmp_path / ".partial" / "old-x.0123abcd").mkdir()  # the learner old-x, staged
    running.refresh()
    assert running.describe() == "now: old-x 0:00"


def test_a_slow_learner_is_named_on_the_bar_while_graded_and_not_once_done(tmp_path):
    repo = tmp_path / "class" / "slow"
    init_repo(repo)
    copy_package(TOY / "solution", repo)
    scale = repo / "toypkg" / "scale.py"
    slow = "\nimport time\n\n\ndef scale(x, factor):\n    time.sleep(1.5)\n    return x * factor\n"
    scale.write_text(scale.read_text() + slow)
    commit_all(repo, "slow", BEFORE)
    out = tmp_path / "out"
    settings = JobSettings(
        course=TOY_COURSE,
        out=out,
        deadline=None,
        test_timeout=1.0,
        seed=0,
        run_id=uuid.uuid4().hex,
        parent_pid=os.getpid(),
    )
    stream = io.StringIO()
    err = Console(file=stream, force_terminal=True, width=200, color_system=None)
    grade_pending(settings, [Learner("slow", repo)], 1, 1, err)
    shown = stream.getvalue()
    assert "now: slow 0:0" in shown  # while it was graded
    assert store.read_record(out, "slow") is not None
    frames = shown.split("\r")
    done = [frame for frame in frames if "1/1" in frame]  # from the moment the learner is done
    assert done and not any("now:" in frame for frame in done)


def test_the_error_count_starts_from_the_error_rows_kept(tmp_path, toy_class, monkeypatch):
    """A rerun keeps an error row (a folder without the package) and grades a new learner: the
    count ends at 'errors 1', as many as the gradebook's error rows (it said 'errors 0')."""
    roster, out = tmp_path / "roster", tmp_path / "out"
    (roster / "broken").mkdir(parents=True)
    (roster / "broken" / "notes.txt").write_text("no package here\n")
    assert grade_class_main(roster, out) == 1
    shutil.copytree(toy_class["roster"] / "good", roster / "good")
    console = Console(file=io.StringIO(), width=200, force_terminal=False)

    def onto_console(settings, pending, total, jobs, err, **options):
        grade_pending(settings, pending, total, jobs, console, **options)

    monkeypatch.setattr(grade_class, "grade_pending", onto_console)
    assert grade_class_main(roster, out) == 1
    shown = console.file.getvalue()
    assert "grading: 2 of 2 learners done (errors 1)" in shown  # no terminal: plain lines
