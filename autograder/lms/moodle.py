"""Moodle's plain-text grade export, filled for its CSV grade import.

The user fields chosen, then one column per grade item headed by its type, name and display
type (`Assignment: Transformers 101 (Real)`); any separator; no points row. On import, the
instructor maps a column to identify users by, and each grade column to a grade item or a new
one.

The file's layout: docs/internals/gradebook.md#moodle-export-files.
"""

from __future__ import annotations

from autograder.lms.lms_format import LmsFormat

MOODLE = LmsFormat(
    name="Moodle",
    default_match="Email address",
    heading=r"(?:[^:]+: ){name} \((?:Real|Percentage|Letter)\)",
    identity=(
        "First name",
        "Last name",
        "ID number",
        "Institution",
        "Department",
        "Email address",
        "Username",
    ),
)
