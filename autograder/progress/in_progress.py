"""Who is being graded now, for the progress bar of grade-class and check.

A learner's child makes its folder in DIR/.partial (store.staging_dir: `<learner>.<8 hex>`)
when it starts and renames it into place when it is done, so the folders there are the learners
in progress (a regraded learner's old folder passes through there too, as store.trash_dir
`-old-<learner>.<8 hex>`, a name no learner id has); the command reads them about once a
second. Without them, a learner that runs into the test time-out leaves the bar standing still
with an ETA from before, and nothing says who.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from rich.progress import ProgressColumn, Task
from rich.text import Text

from autograder.gradebook.store import PARTIAL_DIR

SHOWN = 3  # learners named at most; the others are counted
NOW = "now: {names}"
MORE = "+{count} more"


class InProgress:
    """The learners of ``ids`` with a folder in DIR/.partial, each with when it was first seen
    there (refresh() reads the folder; describe() is called from rich's refresh thread, so
    refresh replaces the mapping instead of changing it)."""

    def __init__(
        self, out: Path, ids: Iterable[str], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.partial = Path(out) / PARTIAL_DIR
        self.ids = set(ids)
        self.clock = clock
        self.since: dict[str, float] = {}
        self.refreshed = clock()  # when refresh() last read the folder

    def refresh(self) -> None:
        try:
            names = os.listdir(self.partial)
        except OSError:  # not made yet, or cleared
            names = []
        now = self.refreshed = self.clock()
        found = {name.rsplit(".", 1)[0] for name in names if "." in name}
        self.since = {i: self.since.get(i, now) for i in sorted(found & self.ids)}

    def started_at(self, learner: str) -> float:
        """When the learner was first seen in progress; one done before any refresh saw them
        started after the last refresh (at most that long ago)."""
        return self.since.get(learner, self.refreshed)

    def clear(self) -> None:
        self.since = {}

    def describe(self) -> str:
        """ "now: kofi 1:05, lena 0:03, +2 more": longest first; "" when nobody is."""
        since = self.since
        if not since:
            return ""
        now = self.clock()
        order = sorted(since, key=lambda i: (since[i], i))
        names = [f"{i} {_clock(now - since[i])}" for i in order[:SHOWN]]
        if len(order) > SHOWN:
            names.append(MORE.format(count=len(order) - SHOWN))
        return NOW.format(names=", ".join(names))


class InProgressColumn(ProgressColumn):
    """A progress column naming the learners in progress (InProgress.describe)."""

    def __init__(self, in_progress: InProgress) -> None:
        super().__init__()
        self.in_progress = in_progress

    def render(self, task: Task) -> Text:
        return Text(self.in_progress.describe(), overflow="ellipsis", no_wrap=True)


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(max(0, int(seconds)), 60)
    return f"{minutes}:{seconds:02d}"
