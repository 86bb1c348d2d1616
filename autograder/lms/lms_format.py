"""What one LMS's gradebook file looks like to `autograder export` (canvas.py, moodle.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class LmsFormat:
    """An LMS's gradebook CSV: its name, the column learners are matched on by default, the
    pattern of an assignment column's heading around the assignment's name (``{name}``: the
    name as the instructor gives it; the rest, an id or a grade type the LMS adds), and the
    first cell of a row that gives each column's points (None: no such row); ``identity``:
    the columns that say who a row is, which export never writes into."""

    name: str
    default_match: str
    heading: str
    points_row: str | None = None
    identity: tuple[str, ...] = ()  # columns that say who a row is: never filled

    def columns_named(self, header: list[str], name: str) -> list[int]:
        """The columns that are the assignment ``name``: its exact heading, else headings
        the LMS made of it (Canvas "Assignment 1 (12345)" for "Assignment 1")."""
        exact = [i for i, heading in enumerate(header) if heading.strip() == name.strip()]
        if exact:
            return exact
        pattern = re.compile(self.heading.format(name=re.escape(name.strip())))
        return [i for i, heading in enumerate(header) if pattern.fullmatch(heading.strip())]

    def is_points_row(self, row: list[str]) -> bool:
        """Whether the row gives the points of each column (Canvas's "Points Possible")."""
        return self.points_row is not None and bool(row) and row[0].strip() == self.points_row
