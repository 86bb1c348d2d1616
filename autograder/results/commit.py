"""Which commit of a learner's repository a batch graded, as the learner's reports say it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from autograder.gradebook.late import LateDays

GRADED_COMMIT = "Graded commit {commit} (committed {time})"
GRADED_AT_DEADLINE = ", the last one at or before the deadline {deadline}"
LATER_NOT_GRADED = "; your later commits were not graded."
#: The same with their number and the last one's time (committer time, as the deadline's).
LATER_COUNTED = (
    "; your {count} later {commits} (by committer time, the last at {last}) {were} not graded."
)
LEFT_OUT = " Left out of your commit, so not graded: {entries}."
LEFT_OUT_SHOWN = 5  # entries named; then how many more
LEFT_OUT_KEPT = 100  # entries kept in results.json (extra_data.graded_commit.left_out)
STALE_COPY = (
    " Your repository could not be fetched again for this grading run, so this is the grade of "
    "the copy fetched before: commits pushed since then are not in it."
)


def left_out_entries(left_out: Sequence[tuple[str, str]], more: int = 0) -> str:
    """'path (why); ...; and N more': the first LEFT_OUT_SHOWN of (path, why) entries that an
    export left out, and how many more (``more``: those not even in the list)."""
    shown = [f"{path} ({why})" for path, why in left_out[:LEFT_OUT_SHOWN]]
    more += len(left_out) - len(shown)
    if more:
        shown.append(f"and {more} more")
    return "; ".join(shown)


@dataclass(frozen=True)
class GradedCommit:
    """Which commit of a learner's repository a batch graded (gradebook/snapshot.py):
    ``commit_time`` ISO 8601 (UTC), ``deadline`` as given ("" without), ``later``: commits
    after the deadline exist (None without a deadline); ``stale``: the repository could not be
    fetched again, and a copy fetched by an earlier run was graded (gradebook/fetch.py);
    ``left_out``: (path, why) of the commit's entries that were not exported
    (gradebook/snapshot.py: symbolic links, names too long), at most LEFT_OUT_KEPT of them,
    and ``left_out_more`` how many more there were; ``later_count`` and ``last_time``: how
    many commits came after the deadline and the committer time of the last (0 and "" in the
    records of versions before them)."""

    commit: str
    commit_time: str
    deadline: str = ""
    later: bool | None = None
    stale: bool = False
    left_out: tuple[tuple[str, str], ...] = ()
    left_out_more: int = 0
    later_count: int = 0
    last_time: str = ""
    late: LateDays | None = None  # an extension or the late policy applied (gradebook/late.py)

    def sentence(self) -> str:
        """What the learner's reports say of the commit graded (one or two sentences)."""
        said = GRADED_COMMIT.format(commit=self.commit[:12], time=self.commit_time)
        if not self.deadline:
            said += "."
        else:
            said += self.late.window_words() if self.late else ""
            said += "" if self.late else GRADED_AT_DEADLINE.format(deadline=self.deadline)
            said += self._later() if self.later else "."
            said += self.late.penalty_sentence() if self.late else ""
        if self.left_out:
            said += LEFT_OUT.format(entries=left_out_entries(self.left_out, self.left_out_more))
        return said + (STALE_COPY if self.stale else "")

    def _later(self) -> str:
        if not (self.later_count and self.last_time):  # a record of a version before them
            return LATER_NOT_GRADED
        one = self.later_count == 1
        return LATER_COUNTED.format(
            count="1" if one else self.later_count,
            commits="commit" if one else "commits",
            last=self.last_time,
            were="was" if one else "were",
        )
