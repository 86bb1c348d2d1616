"""The scores graded by hand in formgrader, as a gradebook.csv column.

The scores graded by hand in formgrader, as a gradebook.csv column (what grade-class and merge
call; class_gradebook.py keeps the class's nbgrader folder).

Each notebook with cells graded by hand (the written answer) gets a column `<component>_by_hand`
after the components (`notebook_by_hand`): the learner's hand-graded points once every such cell
of theirs has a score in DIR/nbgrader/gradebook.db, empty while one is pending or when the
learner has no notebook. Once in, they count in the row's total and max_score (out of 125 with
the notebook, 120 before); the class report says how many are still pending and where to grade
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder.config import CourseConfig
from autograder.gradebook.store import LearnerRecord, read_records
from autograder.notebook import class_gradebook
from autograder.notebook.course import NotebookAssignment, find_notebook_assignments

COLUMN = "{component}_by_hand"
TITLE = "{title}, graded by hand"
#: The class report's sentence for the learners without that column's score.
ABSENT = (
    "{title}: scored for the {have} of {graded} graded learners whose answer is graded; the "
    "others have an empty cell in gradebook.csv (pending, or no notebook)."
)
PENDING_NOTE = (
    "{who} with {title} {wait} for the answers graded by hand: grade {them} in nbgrader's "
    "formgrader, started in {folder} (`jupyter lab`, then Nbgrader > Formgrader > Manual "
    "Grading), then run this command again to bring the scores into gradebook.csv."
)


@dataclass
class HandGrades:
    """What a gradebook rebuild adds: each learner's hand-graded points by column, and the
    sentences for the class report (pending answers, a folder that could not be prepared)."""

    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    points: dict[str, float] = field(default_factory=dict)  # column -> its points
    notes: list[str] = field(default_factory=list)

    def adjust(self, record: LearnerRecord) -> LearnerRecord:
        """The record with its hand-graded points as columns, in its total and max_score."""
        mine = self.scores.get(record.learner, {})
        if not mine or record.failed:
            return record
        return replace(
            record,
            components={**record.components, **mine},
            total=(record.total or 0.0) + sum(mine.values()),
            max_score=(record.max_score or 0.0) + sum(self.points[c] for c in mine),
        )


def hand_graded_columns(config: CourseConfig) -> list[tuple[str, str, float]]:
    """(column, title, points) of each notebook with cells graded by hand."""
    return [
        (COLUMN.format(component=a.component), TITLE.format(title=a.title), a.manual_points)
        for a in _with_manual_cells(config)
    ]


def hand_graded_points(config: CourseConfig, notebooks: set[str]) -> float:
    """The points graded by hand of the notebook components among ``notebooks``: what their
    answers are out of, graded or still pending."""
    return sum(a.manual_points for a in _with_manual_cells(config) if a.component in notebooks)


def hand_grades(config: CourseConfig, out: Path, learners: list[str] | None) -> HandGrades:
    """Sync DIR/nbgrader with the learners' graded notebooks and read the hand-graded scores
    (only of ``learners`` when given)."""
    found = HandGrades()
    records = [r for r in read_records(out) if learners is None or r.learner in learners]
    for assignment in _with_manual_cells(config):
        column = COLUMN.format(component=assignment.component)
        found.points[column] = assignment.manual_points
        have = [r.learner for r in records if not r.failed and assignment.component in r.components]
        try:
            scores = class_gradebook.sync(assignment, out, have)
        except (class_gradebook.ClassGradebookError, OSError) as error:
            found.notes.append(str(error))
            continue
        for learner, score in scores.items():
            if score is not None:
                found.scores.setdefault(learner, {})[column] = score
        pending = sorted(learner for learner, score in scores.items() if score is None)
        if pending:
            found.notes.append(pending_note(len(pending), len(scores), assignment, out))
    return found


def pending_note(count: int, have: int, assignment: NotebookAssignment, out: Path) -> str:
    """PENDING_NOTE for `count` of the `have` learners with the notebook."""
    if have == 1:
        who, wait = "The learner", "waits"
    else:
        who, wait = f"{count} of the {have} learners", "wait" if count > 1 else "waits"
    return PENDING_NOTE.format(
        who=who,
        title=assignment.title,
        wait=wait,
        them="them" if count > 1 else "it",
        folder=class_gradebook.folder(out),
    )


def carry_from_shards(config: CourseConfig, out: Path, shards: Mapping[str, Path]) -> None:
    """merge: the hand-graded scores each shard's DIR/nbgrader holds, into DIR's (where DIR has
    none yet for that learner's same answer)."""
    for assignment in _with_manual_cells(config):
        try:
            class_gradebook.carry(assignment, out, shards)
        except (class_gradebook.ClassGradebookError, OSError):
            continue  # the rebuild that follows says why


def _with_manual_cells(config: CourseConfig) -> list[NotebookAssignment]:
    return [a for a in find_notebook_assignments(config.root) if a.manual_points]
