"""A course's nbgrader notebook assignment, read without nbgrader (trusted side).

Layout (the conventions; nothing here is specific to one course)::

    <course root>/course.toml
    <course root>/notebooks/nbgrader_config.py          the nbgrader course directory
    <course root>/notebooks/source/<id>/<id>.ipynb       the instructor's source notebook
    <course root>/notebooks/source/<id>/*                files released beside it (data)
    <learner repository>/assignments/notebooks/<id>.ipynb   where a learner keeps their copy

The notebook's points come from its nbgrader cells: the autograded test cells make up the
component's points (all or nothing per cell); a manually graded cell is graded by the
instructor in nbgrader and is not part of the autograded component.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

COURSE_DIR = "notebooks"
CONFIG_FILE = "nbgrader_config.py"
LEARNER_DIR = PurePosixPath("assignments/notebooks")
COMPONENT = "notebook"

NO_NOTEBOOK_COURSE = (
    "The course at {root} has no nbgrader notebook assignment; expected "
    "{course_dir}/{config} and {course_dir}/source/<id>/<id>.ipynb."
)


class NotebookCourseError(ValueError):
    """The course's notebook folder is unusable; the message says where and why."""


@dataclass(frozen=True)
class GradeCell:
    """One nbgrader grade cell of the source notebook."""

    grade_id: str
    points: float
    manual: bool  # a written answer graded by hand (nbgrader "solution" + "grade")


@dataclass(frozen=True)
class NotebookAssignment:
    """One nbgrader assignment of a course, graded as one component."""

    course_dir: Path
    assignment: str
    component: str = COMPONENT

    @property
    def title(self) -> str:
        return "Notebook: " + self.assignment.replace("_", " ")

    @property
    def source_folder(self) -> Path:
        return self.course_dir / "source" / self.assignment

    @property
    def source_notebook(self) -> Path:
        return self.source_folder / f"{self.assignment}.ipynb"

    @property
    def learner_path(self) -> PurePosixPath:
        """Where a learner repository keeps the notebook, relative to its root."""
        return LEARNER_DIR / f"{self.assignment}.ipynb"

    def grade_cells(self) -> list[GradeCell]:
        """The source notebook's grade cells, in notebook order."""
        document = json.loads(self.source_notebook.read_text(encoding="utf-8"))
        cells = []
        for cell in document.get("cells", []):
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("grade"):
                cells.append(
                    GradeCell(
                        grade_id=str(meta["grade_id"]),
                        points=float(meta.get("points", 0)),
                        manual=bool(meta.get("solution")) or cell.get("cell_type") != "code",
                    )
                )
        return cells

    @property
    def points(self) -> float:
        """The autograded points: the sum of the autograded test cells' points."""
        return sum(c.points for c in self.grade_cells() if not c.manual)

    def cell_labels(self) -> dict[str, str]:
        """How feedback names each code cell with a grade_id (cell_label), by grade_id."""
        cells = json.loads(self.source_notebook.read_text(encoding="utf-8")).get("cells", [])
        labels: dict[str, str] = {}
        for index, cell in enumerate(cells):
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id and cell.get("cell_type") == "code":
                labels[str(grade_id)] = cell_label(cells, index)
        return labels

    @property
    def manual_points(self) -> float:
        """The points of the cells graded by hand in nbgrader (a written answer): never part
        of the component, results.json or the gradebook."""
        return sum(c.points for c in self.grade_cells() if c.manual)


LABEL_LINE = 60  # characters of a cell's first line in its label


def cell_text(cell: object) -> str:
    """A notebook cell's source as one string (nbformat allows a list of lines)."""
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    return "".join(map(str, source)) if isinstance(source, list) else str(source)


def cell_label(cells: list, index: int) -> str:
    """How feedback names the code cell at `index` of a notebook's cells: as the learner sees it
    in Jupyter, by its first line and the section heading above it, then its grade_id (which
    Jupyter does not show) in parentheses for instructors when it has one: '"X_vocab, missing =
    lookup(vectors, VOCAB)" in section 2, "Look words up" (vocab_report)'."""
    heading = ""
    for cell in cells[:index]:
        if isinstance(cell, dict) and cell.get("cell_type") == "markdown":
            lines = cell_text(cell).splitlines()
            titles = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
            heading = titles[0] if titles else heading
    cell = cells[index] if 0 <= index < len(cells) else {}
    first = next((line.strip() for line in cell_text(cell).splitlines() if line.strip()), "")
    meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
    nbgrader = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
    return _label(str(grade_id) if grade_id else "", first, heading)


def _label(grade_id: str, first: str, heading: str) -> str:
    first, heading = first[:500], heading[:200]  # a learner's cell may hold anything
    if len(first) > LABEL_LINE:
        cut = first[: LABEL_LINE - 1]
        first = (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip(" ,;:") + "…"
    numbered = re.fullmatch(r"(\d+)\.\s+(.*)", heading)
    if numbered:  # "2. Look words up": no ". " mid-sentence, where a reader would stop
        where = f' in section {numbered[1]}, "{numbered[2]}"'
    else:
        where = f' under "{heading}"' if heading else ""
    own = f" ({grade_id})" if grade_id else ""
    return f'"{first}"{where}{own}' if first else f"the cell{where}{own}"


def find_notebook_assignments(course_root: Path) -> list[NotebookAssignment]:
    """The course's notebook assignments, sorted by id; [] when it has no notebooks folder."""
    course_dir = Path(course_root).resolve() / COURSE_DIR
    if not (course_dir / CONFIG_FILE).is_file():
        return []
    found = []
    for folder in sorted((course_dir / "source").glob("*/")):
        if (folder / f"{folder.name}.ipynb").is_file():
            found.append(NotebookAssignment(course_dir=course_dir, assignment=folder.name))
    if len(found) > 1:  # one component per assignment, named after it
        found = [
            NotebookAssignment(a.course_dir, a.assignment, f"{COMPONENT}_{a.assignment}")
            for a in found
        ]
    return found


def only_assignment(course_root: Path) -> NotebookAssignment:
    """The course's single notebook assignment; NotebookCourseError when there is none."""
    found = find_notebook_assignments(course_root)
    if not found:
        raise NotebookCourseError(
            NO_NOTEBOOK_COURSE.format(root=course_root, course_dir=COURSE_DIR, config=CONFIG_FILE)
        )
    return found[0]


def notebook_components(course_root: Path) -> list[tuple[str, str, float]]:
    """(component name, title, autograded points) of each notebook assignment of the course,
    for gradebooks that list components beside course.toml's."""
    return [(a.component, a.title, a.points) for a in find_notebook_assignments(course_root)]
