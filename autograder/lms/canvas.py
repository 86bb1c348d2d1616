"""Canvas's gradebook export (Grades > Export > CSV), which Canvas imports back.

Its header starts with the identity columns `Student, ID, SIS User ID, SIS Login ID` (some
instances add `Integration ID`), then `Section`, then one column per assignment, headed by the
assignment's name and its Canvas id in parentheses (`Assignment 1 (12345)`), then read-only
totals (`Current Points`, `Final Score`, ...). The row after the header may be
`    Points Possible` (the first cell indented), giving each assignment's points; the rows after
it are students. A column whose heading Canvas does not know is imported as a new assignment,
worth the points its Points Possible cell gives: so exporting into a new column is how the
course's grade first reaches Canvas.
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
