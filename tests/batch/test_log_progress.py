"""Progress as plain lines when stderr is no terminal (H47: a CI log got one line at the end)."""

from __future__ import annotations

import io

from rich.console import Console

from autograder.progress import log_lines
from autograder.progress.log_lines import LogLines

from .conftest import TOY, copy_package, grade_class_main


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _lines(total: int, started: int = 0):
    stream, clock = io.StringIO(), Clock()
    console = Console(file=stream, width=200)
    return LogLines(console, "grading", total, started, clock=clock), stream, clock


def test_a_line_at_each_tenth_with_the_time_left():
    lines, stream, clock = _lines(total=100)
    for done in range(1, 101):
        clock.now += 0.5
        lines.update(done, failed=done // 50, left=(100 - done) * 0.5)
    said = stream.getvalue().splitlines()
    assert len(said) == 10
    assert (
        said[0] == "grading: 10 of 100 learners done (errors 0), 0:00:05 so far, about 0:00:45 left"
    )
    assert (
        said[4] == "grading: 50 of 100 learners done (errors 1), 0:00:25 so far, about 0:00:25 left"
    )
    assert said[-1] == "grading: 100 of 100 learners done (errors 2), 0:00:50 so far"


def test_the_lines_say_what_they_count():
    stream, clock = io.StringIO(), Clock()
    lines = LogLines(Console(file=stream, width=200), "checking", 2, 0, clock=clock, noun="cases")
    clock.now += 3.0
    lines.update(2, failed=0, left=0.0)
    assert stream.getvalue().splitlines() == [
        "checking: 2 of 2 cases done (errors 0), 0:00:03 so far"
    ]


def test_a_line_every_minute_while_no_learner_ends():
    lines, stream, clock = _lines(total=1000)
    lines.update(1, 0, left=59940.0)  # the first learner: not yet a tenth, not yet a minute
    assert stream.getvalue() == ""
    clock.now += log_lines.INTERVAL
    lines.update(1, 0, left=59940.0)  # called each second by grade_pending while it waits
    clock.now += 1.0
    lines.update(1, 0, left=59939.0)
    assert stream.getvalue().splitlines() == [
        "grading: 1 of 1000 learners done (errors 0), 0:01:00 so far, about 16:39:00 left"
    ]


def test_a_time_left_nobody_knows_is_said_to_be_unknown():
    """While kofi runs past every learner done (time_left.py), the line claims no time left."""
    lines, stream, clock = _lines(total=12, started=10)
    clock.now += log_lines.INTERVAL
    lines.update(11, 0, "now: kofi 0:55", left=None)
    assert stream.getvalue().splitlines() == [
        "grading: 11 of 12 learners done (errors 0), 0:01:00 so far, time left unknown; "
        "now: kofi 0:55"
    ]


def test_grade_class_writes_lines_to_a_log(tmp_path, capsys):
    roster, out = tmp_path / "roster", tmp_path / "out"
    for learner in ("ada", "bo"):
        copy_package(TOY / "solution", roster / learner)
    assert grade_class_main(roster, out, quiet=False) == 0
    err = capsys.readouterr().err
    assert "grading: 1 of 2 learners done (errors 0)" in err
    assert "grading: 2 of 2 learners done (errors 0)" in err
