"""Progress as plain lines, for a log that is no terminal (a CI job, `> run.log`).

rich draws its progress bar only on a terminal; elsewhere it printed one line when the run
ended (H47), so a grade-class of hundreds of learners in GitHub Actions (regrade.yml) said
nothing for its whole length. `LogLines` prints one line at each tenth of the class and at
least every INTERVAL seconds of the run while learners are graded:

    grading: 120 of 1000 learners done (errors 2), 0:01:05 so far, about 0:08:00 left

The time left is the caller's (time_left.py); "time left unknown" when it has none.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

from rich.console import Console

LINE = "{label}: {done} of {total} {noun} done (errors {failed}), {elapsed} so far{left}"
LEFT = ", about {left} left"
UNKNOWN = ", time left unknown"
INTERVAL = 60.0  # seconds: at most this long without a line
STEPS = 10  # a line at each tenth of the class


class LogLines:
    """Lines on ``console`` as learners are done; ``started``: how many were done before this
    run (kept from an earlier one); ``noun``: what is counted ("learners", or `autograder
    check`'s "cases")."""

    def __init__(
        self,
        console: Console,
        label: str,
        total: int,
        started: int,
        clock: Callable[[], float] = time.monotonic,
        noun: str = "learners",
    ) -> None:
        self.console, self.label, self.total, self.started = console, label, total, started
        self.noun = noun
        self.clock = clock
        self.start = self.last = clock()
        self.step = max(1, -(-total // STEPS))  # ceil: at most STEPS lines by count
        self.next = (started // self.step + 1) * self.step

    def update(self, done: int, failed: int, running: str = "", left: float | None = None) -> None:
        """``done`` learners of the class are done, ``failed`` of them with an error row;
        ``running``: who is being graded, for how long (InProgress.describe: "now: kofi 1:05");
        ``left``: the seconds left (TimeLeft.seconds), None when unknown."""
        now = self.clock()
        if done < self.next and now - self.last < INTERVAL and done < self.total:
            return
        while self.next <= done:
            self.next += self.step
        self.last = now
        line = self.line(done, failed, now, left)
        if running and done < self.total:
            line += f"; {running}"
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def line(self, done: int, failed: int, now: float, left: float | None = None) -> str:
        elapsed = now - self.start
        said = ""
        if done < self.total:
            said = UNKNOWN if left is None else LEFT.format(left=_clock(left))
        return LINE.format(
            label=self.label,
            done=done,
            total=self.total,
            noun=self.noun,
            failed=failed,
            elapsed=_clock(elapsed),
            left=said,
        )


def _clock(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds)))
