"""What a graded notebook says besides its autograded points: its notes and extra_data entry.

The cells graded by hand (the written answer) are not in the component nor in the total: the
grade's notes say they are pending, with their points, and results.json's extra_data holds them
under the component's name ("graded_by_hand", status "pending"); the instructor grades them in
nbgrader's formgrader and the class's gradebook adds them (class_gradebook.py). When the grader
lacked the modules of the notebook's real data (course.toml [notebook] data_modules), the
notebook ran on its fallback, and a note says so.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from autograder.config import CourseConfig
from autograder.notebook.autograde import NotebookGrade
from autograder.notebook.course import NotebookAssignment

PENDING = "pending"
BY_HAND_PENDING = (
    "{title}: {cells} ({points:g} points) {is_} graded by hand by your instructor: pending, and "
    "apart from the total above until then."
)
FALLBACK_DATA = (
    "{title} was graded without {data}: the grader lacks {modules}, so your notebook ran on its "
    "fallback data, and the numbers in its graded copy are not {data}'s."
)


@dataclass(frozen=True)
class DataCheck:
    """The notebook's real data (course.toml [notebook] data_name) and which of the modules it
    is read with the grader lacks (none: the grade was made on it)."""

    name: str
    missing: tuple[str, ...] = ()


def data_check(config: CourseConfig) -> DataCheck:
    """Whether this grader has the modules of the notebook's real data (course.toml [notebook]
    data_modules): the learner's kernel runs with this Python, so it has what this one has."""
    settings = config.notebook
    missing = tuple(m for m in settings.data_modules if not _importable(m))
    return DataCheck(settings.data_name, missing)


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing or broken
        return False


def part_notes(
    assignment: NotebookAssignment, graded: NotebookGrade, data: DataCheck | None
) -> tuple[list[str], dict]:
    """The notes for the learner (cells put back, the written answer pending, the fallback
    data) and the component's results.json extra_data entry."""
    manual = [c for c in assignment.grade_cells() if c.manual]
    notes = list(graded.notes)
    if manual:
        names = " and ".join(c.grade_id for c in manual)
        notes.append(
            BY_HAND_PENDING.format(
                title=assignment.title,
                cells=names,
                points=sum(c.points for c in manual),
                is_="is" if len(manual) == 1 else "are",
            )
        )
    extra: dict = {
        "assignment": assignment.assignment,
        "graded_by_hand": [
            {"cell": c.grade_id, "points": c.points, "score": None, "status": PENDING}
            for c in manual
        ],
        "notes": list(graded.notes),
    }
    if data is not None and data.name:
        extra["data"] = {"name": data.name, "used": not data.missing}
        if data.missing:
            modules = ", ".join(data.missing)
            title = assignment.title
            notes.append(FALLBACK_DATA.format(title=title, data=data.name, modules=modules))
            extra["data"]["missing_modules"] = list(data.missing)
    return notes, extra
