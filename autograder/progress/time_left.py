"""How long a batch has left, from the learners done in this run and those still running.

A rate alone (learners done per second so far) goes stale when the last learners are slow: in
the example class, kofi's infinite loop takes its time-outs for half a minute after the eleven
others are done, and the rate of the eleven said "ETA 0:00:02" all that time. So the estimate
reads each learner's own duration (from when its folder appeared in DIR/.partial to when it was
reported done; in_progress.py) and what is running now:

* a learner still running is expected to take what the learners done in this run that ran at
  least as long took, on average, less what it has run; one running longer than every learner
  done so far is past anything the run has seen, and the time left is unknown (None), while
  the progress names who is running and for how long;
* a learner not started yet is expected to take the mean duration;
* the work left is spread over the jobs, and is never less than the longest expected of a
  learner running now.

No learner done in this run (those kept from an earlier one are not timed): unknown.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from datetime import timedelta

from rich.progress import ProgressColumn, Task
from rich.text import Text

SHOWN = "ETA {left}"
UNKNOWN = "ETA unknown"


class TimeLeft:
    """The seconds a batch of ``total`` learners has left, ``jobs`` graded at a time."""

    def __init__(self, total: int, jobs: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.jobs, self.clock = total, max(1, jobs), clock
        self.durations: tuple[float, ...] = ()  # replaced, never changed: read by rich's thread

    def finished(self, started_at: float) -> None:
        """A learner done now, that started at ``started_at`` (on the same clock)."""
        self.durations = (*self.durations, max(0.0, self.clock() - started_at))

    def seconds(self, done: int, running: Mapping[str, float]) -> float | None:
        """The seconds left with ``done`` learners done and ``running`` ({learner: started at})
        being graded; None when no duration seen in this run says how long."""
        durations = self.durations
        if not durations or done >= self.total:
            return None if done < self.total else 0.0
        now = self.clock()
        expected = []
        for started_at in running.values():
            ran = now - started_at
            longer = [d - ran for d in durations if d >= ran]
            if not longer:
                return None  # running longer than any learner done: the rate no longer holds
            expected.append(statistics.fmean(longer))
        waiting = max(0, self.total - done - len(running))
        spread = (sum(expected) + waiting * statistics.fmean(durations)) / self.jobs
        return max([spread, *expected])


class TimeLeftColumn(ProgressColumn):
    """A progress column with the time left (``seconds()``: TimeLeft.seconds of now), or
    UNKNOWN."""

    def __init__(self, seconds: Callable[[], float | None]) -> None:
        super().__init__()
        self.seconds = seconds

    def render(self, task: Task) -> Text:
        left = 0.0 if task.finished else self.seconds()
        if left is None:
            return Text(UNKNOWN, style="progress.remaining")
        return Text(SHOWN.format(left=timedelta(seconds=round(left))), style="progress.remaining")
