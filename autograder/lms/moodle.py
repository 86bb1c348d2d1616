"""Moodle's plain-text grade export, filled for its CSV grade import.

Moodle's grade export as plain text (Grades > Export > Plain text file), which Moodle's CSV
grade import (Grades > Import > CSV file) reads back.

Its header is the user fields chosen (by default `First name, Last name, ID number,
Institution, Department, Email address`), then one column per grade item, headed by the item's
type, name and display type (`Assignment: Transformers 101 (Real)`), then `Last downloaded
from this course`; fields with a space are quoted, and the separator is the one chosen when
exporting (comma, tab, semicolon or colon). There is no points row. On import, the instructor
maps a column to identify users by (email address, username, ID number) and each grade column
to a grade item, or to a new grade item (what a column this command added is for).
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
