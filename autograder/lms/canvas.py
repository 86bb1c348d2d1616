"""Canvas's gradebook export (Grades > Export > CSV), which Canvas imports back.

Identity columns first, then one column per assignment headed by its name and Canvas id
(`Assignment 1 (12345)`); the row after the header may be `    Points Possible`. A column
Canvas does not know is imported as a new assignment, worth its Points Possible cell.

The file's layout: docs/internals/gradebook.md#canvas-export-files.
"""

from __future__ import annotations

from autograder.lms.lms_format import LmsFormat

CANVAS = LmsFormat(
    name="Canvas",
    default_match="SIS Login ID",
    heading=r"{name} \(\d+\)",
    points_row="Points Possible",
    identity=("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section"),
)
