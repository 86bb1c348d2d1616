"""The late policy: course.toml's [late], each learner's own deadline and the penalty.

Without --deadline nothing here applies: HEAD is graded. With --deadline D:

* a learner's own deadline is D plus their roster's ``extension_days`` (0 when not given);
* without [late], their last commit at or before their own deadline is graded, as always;
* with [late] (``penalty_per_day`` percent, ``max_days``), their last commit at or before their
  own deadline plus ``max_days`` days (the end of their late window) is graded; it is
  ``days_late`` days late, each day started counting as one (a commit one minute late is one
  day late), and loses ``penalty_per_day`` percent of the course's total points per day, never
  more than the learner scored (taken by results/late_penalty.py). The gradebook's ``total`` is
  after the penalty, ``raw_total`` before it.

Committer time decides, as for the deadline itself (snapshot.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from autograder.points_text import points

if TYPE_CHECKING:  # config.py imports this module: no git code for a course file
    from autograder.gradebook.snapshot import Selection

MAX_LATE_DAYS = 365
DAY = timedelta(days=1)

#: What the learner's reports say, after "Graded commit X (committed T)".
AT_OWN_DEADLINE = (
    ", the last one at or before your deadline {deadline} (the class deadline {class_deadline} "
    "with your extension of {extension})"
)
IN_WINDOW = (
    ", the last one at or before {cutoff}, the end of your late window (your deadline "
    "{deadline}{extended}, then at most {max_days} late)"
)
EXTENDED = ", the class deadline with your extension of {extension}"
ON_TIME = " It was on time: no late penalty."
PENALTY = (
    " It was committed {days_late} after your deadline (each day started counts): the late "
    "policy takes {percent}% of the total points per day, {penalty} points; your total before "
    "the penalty was {raw}."
)
#: Where a row's error would say "the deadline" of a moment that is not the class deadline.
WINDOW_END = "the end of the late window {cutoff} ({why})"
WINDOW_WHY = "the deadline {deadline}{extended}, plus {max_days} late"
WITH_EXTENSION = " with an extension of {extension}"
OWN_DEADLINE_END = (
    "the learner's own deadline {cutoff} (the deadline {deadline} with an extension of {extension})"
)
EXTENSION_CHANGED = (
    "{learners} another extension_days in the roster than their result in {out} was graded "
    "with; grading them again."
)


class LatePolicy(BaseModel):
    """course.toml's [late] table: ``penalty_per_day``, percent of the course's total points
    taken per day (each day started counts) a learner's graded commit is after their own
    deadline; ``max_days``, the days after that deadline a commit is still graded."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    penalty_per_day: float = Field(gt=0, le=100, allow_inf_nan=False)
    max_days: int = Field(ge=1, le=MAX_LATE_DAYS)


@dataclass(frozen=True)
class Window:
    """One learner's deadlines: the class ``deadline`` (as given), their own (``own``: the
    class deadline plus ``extension_days``) and ``cutoff``, the last instant a commit is
    graded (``own`` without a policy, ``own`` plus max_days with one)."""

    deadline: str
    own: datetime
    cutoff: datetime
    extension_days: int
    policy: LatePolicy | None


@dataclass(frozen=True)
class LateDays:
    """How late one learner's graded commit was: their own deadline (ISO 8601), the class
    deadline, their extension, the days late (0: on time), the policy's percent per day and
    max days (0 without a policy); once graded, the ``penalty`` in points and the total
    before it (``raw_total``). Also in results.json (extra_data.graded_commit.late)."""

    deadline: str
    class_deadline: str
    extension_days: int
    days_late: int
    penalty_per_day: float = 0.0
    max_days: int = 0
    cutoff: str = ""
    penalty: float = 0.0
    raw_total: float | None = None

    def window_words(self) -> str:
        """The graded commit's place: before the end of the late window or the own deadline."""
        extension = days_text(self.extension_days)
        if self.max_days:
            extended = EXTENDED.format(extension=extension) if self.extension_days else ""
            return IN_WINDOW.format(
                cutoff=self.cutoff,
                deadline=self.deadline,
                extended=extended,
                max_days=days_text(self.max_days),
            )
        return AT_OWN_DEADLINE.format(
            deadline=self.deadline, class_deadline=self.class_deadline, extension=extension
        )

    def penalty_sentence(self) -> str:
        """The days late and the penalty ("" without a policy)."""
        if not self.max_days:
            return ""
        if not self.days_late:
            return ON_TIME
        return PENALTY.format(
            days_late=days_text(self.days_late),
            percent=f"{self.penalty_per_day:g}",
            penalty=points(self.penalty),
            raw="" if self.raw_total is None else points(self.raw_total),
        )


def days_text(days: int) -> str:
    return "1 day" if days == 1 else f"{days} days"


def window(deadline: str | None, extension_days: int, policy: LatePolicy | None) -> Window | None:
    """The learner's deadlines for --deadline (None without one). ValueError (a sentence) for
    a deadline snapshot.parse_deadline refuses."""
    from autograder.gradebook.snapshot import parse_deadline

    moment = parse_deadline(deadline)
    if moment is None or deadline is None:
        return None
    own = moment + extension_days * DAY
    cutoff = own + policy.max_days * DAY if policy is not None else own
    return Window(deadline, own, cutoff, extension_days, policy)


def applies(span: Window | None) -> bool:
    """Whether the learner's commit is judged here (an extension or a policy), not by the
    plain deadline rule."""
    return span is not None and (span.extension_days > 0 or span.policy is not None)


def select(path: Path, span: Window | None) -> Selection:
    """snapshot.select at the learner's cutoff; its errors name the end of the late window
    where they would say "the deadline" of a moment that is not the class deadline."""
    from autograder.gradebook import snapshot

    if span is None:
        return snapshot.select(path, None)
    try:
        return snapshot.select(path, span.cutoff)
    except snapshot.SnapshotError as error:
        if not applies(span):
            raise
        said = str(error).replace(f"the deadline {_iso(span.cutoff)}", _window_end(span))
        raise type(error)(said) from None


def _window_end(span: Window) -> str:
    extension = days_text(span.extension_days)
    if span.policy is None:
        return OWN_DEADLINE_END.format(
            cutoff=_iso(span.cutoff), deadline=span.deadline, extension=extension
        )
    extended = WITH_EXTENSION.format(extension=extension) if span.extension_days else ""
    why = WINDOW_WHY.format(
        deadline=span.deadline, extended=extended, max_days=days_text(span.policy.max_days)
    )
    return WINDOW_END.format(cutoff=_iso(span.cutoff), why=why)


def judge(span: Window | None, commit_time: str) -> LateDays | None:
    """How late the commit at ``commit_time`` (ISO 8601) is for this learner; None when no
    extension or policy applies (the plain deadline rule) or the folder has no commit."""
    if not applies(span) or not commit_time:
        return None
    assert span is not None
    committed = datetime.fromisoformat(commit_time)
    late_by = (committed - span.own).total_seconds()
    days = max(0, math.ceil(late_by / DAY.total_seconds()))
    policy = span.policy
    return LateDays(
        deadline=span.own.isoformat(timespec="seconds"),
        class_deadline=span.deadline,
        extension_days=span.extension_days,
        days_late=days,
        penalty_per_day=policy.penalty_per_day if policy else 0.0,
        max_days=policy.max_days if policy else 0,
        cutoff=span.cutoff.isoformat(timespec="seconds"),
    )


#: The gradebook's columns of the late policy (store.gradebook_columns), when it or an
#: extension applied to a row: LATE_COLUMNS after `late`, PENALTY_COLUMNS before `total`.
LATE_COLUMNS = ("extension_days", "late_days")
PENALTY_COLUMNS = ("raw_total", "late_penalty")


def late_cells(record: Any) -> tuple[str, str]:
    """A store.LearnerRecord's extension_days and late_days cells: empty for a row the policy
    did not judge (an error)."""
    if record.late_days is None:
        return "", ""
    return str(record.extension_days), str(record.late_days)


def record_fields(record: Any, late: LateDays | None) -> None:
    """The gradebook columns of the late policy on a store.LearnerRecord: extension_days,
    late_days, late_penalty and raw_total (None: no extension or policy applied)."""
    if late is None:
        return
    record.extension_days, record.late_days = late.extension_days, late.days_late
    if late.raw_total is not None:
        record.late_penalty, record.raw_total = late.penalty, late.raw_total


def changed_extensions(learners: Iterable[Any], records: dict, out: Path) -> str:
    """EXTENSION_CHANGED for the learners whose record (store.LearnerRecord) was graded with
    another extension than the roster gives now ("" when none): their key no longer matches,
    so they are graded again."""
    count = sum(
        1
        for learner in learners
        if records.get(learner.id) is not None
        and records[learner.id].extension_days != learner.extension_days
    )
    if not count:
        return ""
    who = "1 learner has" if count == 1 else f"{count} learners have"
    return EXTENSION_CHANGED.format(learners=who, out=out)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")
