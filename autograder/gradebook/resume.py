"""What a rerun keeps: the rows graded with the same settings, and what it says about them.

A learner's record is kept by a rerun when its key (gradebook/settings.settings_key) matches the
run's, and it is not older than an unfinished --force run; every other learner is graded again.
"""

from __future__ import annotations

from collections.abc import Iterable

from autograder.gradebook import snapshot, store
from autograder.gradebook.settings import JobSettings, settings_key

ALL_SAVED = (
    "All {total} learners already have a result in {out} from the same settings; writing the "
    "gradebook and the class report from them (--force regrades everyone)."
)
RESUMING = (
    "{done} of {total} learners already have a result in {out} from the same settings; grading "
    "the others (--force regrades everyone)."
)


def as_recorded(deadline: str | None, records: Iterable[store.LearnerRecord | None]) -> str | None:
    """``deadline`` as DIR's records write it when they name the same instant in other words
    (2026-08-15T23:59:00+05:30 and 2026-08-15T18:29:00Z): a rerun that writes the deadline
    differently keeps their grades instead of regrading everyone, and the report names one
    deadline."""
    if deadline is None:
        return None
    moment = snapshot.parse_deadline(deadline)
    for recorded in sorted({r.deadline for r in records if r is not None and r.deadline}):
        try:
            if snapshot.parse_deadline(recorded) == moment:
                return recorded
        except ValueError:  # a record of a damaged or hand-edited folder: not this instant
            continue
    return deadline


def reusable(record: store.LearnerRecord | None, settings: JobSettings, learner) -> bool:
    """Whether the record was graded with these settings from this learner's repository."""
    return record is not None and record.key == settings_key(settings, learner)


def error_row(record: store.LearnerRecord | None) -> bool:
    """What the progress bar counts as an error: a learner the grader could not grade (not one
    who gave nothing to grade; no row at all after the learner's turn: an error)."""
    return record is None or record.grading_error


def kept(record: store.LearnerRecord | None, settings: JobSettings, learner, forced: str) -> bool:
    """Whether a rerun keeps the record: the same settings, and not older than an unfinished
    --force run (``forced``, ISO 8601 UTC, or "")."""
    if not reusable(record, settings, learner):
        return False
    return not forced or record.graded_at >= forced
