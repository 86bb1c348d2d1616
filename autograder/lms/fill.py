"""One column of an LMS template filled with the gradebook's totals (commands/export.py).

Learners are matched on a column of the template (``match``) against a key per learner (their
learner id, or a column of the roster), without regard to case or surrounding spaces. Every
row, column and cell stays as it was but for the filled column: a learner's total after the
late penalty (two decimals), empty for a learner without a grade unless ``missing_as_zero``,
and the course's total points in the points row. A template row of a learner the gradebook
does not have keeps its cell.

A cell export writes that a spreadsheet would run as a formula gets a single quote in front
(learner_text.py).

What the instructor sees: docs/instructor/lms-export.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autograder.learner_text import spreadsheet_cell
from autograder.lms.lms_format import LmsFormat
from autograder.lms.template import CsvTemplate
from autograder.points_text import points

NO_MATCH_COLUMN = (
    "The template {path} has no column {match!r} to match learners on; its columns are: "
    "{columns}. Give --match with the column that holds each learner's {what}."
)
MATCH_TWICE = "The template {path} has the column {match!r} twice; match on a column it has once."
DUPLICATE_KEY = (
    "The template {path} gives {match} {key!r} on line {first} and again on line {second}; "
    "each learner needs their own, or one learner's grade would go to another. Fix the "
    "template (or match on another column with --match)."
)
AMBIGUOUS_COLUMN = (
    "--column {name!r} names {count} columns of the template {path}: {headings}; give one of "
    "these headings in full."
)
IDENTITY_COLUMN = (
    "--column {name!r} is the template's {heading!r} column, which says who each row is; name "
    "the assignment column to fill (a new name adds a column)."
)
NO_KEY = "line {line}: {who}, whose {match} is empty"


class ExportError(ValueError):
    """The template and the options cannot make an export; the message is one sentence."""


@dataclass
class Filled:
    """What fill() did: the column filled (its heading, whether it was added, the points it
    said before, "" when none), the learners whose cell was written empty (no grade), and
    the unmatched learners: gradebook ids the template lacks, template rows (described) the
    gradebook lacks."""

    heading: str
    added: bool
    points_before: str = ""
    points_after: str = ""  # what the points row says now ("" without a points row)
    filled: int = 0
    empty: list[str] = field(default_factory=list)
    not_in_template: list[str] = field(default_factory=list)
    not_in_gradebook: list[str] = field(default_factory=list)


def fill(
    template: CsvTemplate,
    lms: LmsFormat,
    *,
    column: str,
    match: str,
    keys: dict[str, str],
    totals: dict[str, float | None],
    course_total: float,
    missing_as_zero: bool = False,
) -> Filled:
    """Fill ``column`` of the template in place. ``keys``: each gradebook learner's key (their
    id or roster column), ``totals``: their total (None without a grade). ExportError when
    the template cannot be matched or the column is not one to fill."""
    matched_at = _match_column(template, lms, match)
    index, added = _column(template, lms, column, matched_at)
    by_key = {key.strip().casefold(): learner for learner, key in keys.items() if key.strip()}
    done = Filled(heading=template.header[index], added=added)
    seen: dict[str, int] = {}
    for row, line in zip(template.rows, template.lines, strict=True):
        row.extend([""] * (index + 1 - len(row)))  # a short row: only up to the column
        if lms.is_points_row(row):
            done.points_before = row[index]
            row[index] = done.points_after = _cell(points(course_total))
            continue
        key = row[matched_at].strip().casefold()
        if not key:
            if row[0].strip():  # a person without a key; a row of all blanks is no learner
                done.not_in_gradebook.append(NO_KEY.format(line=line, who=row[0], match=match))
            continue
        if key in seen:
            raise ExportError(
                DUPLICATE_KEY.format(
                    path=template.path,
                    match=match,
                    key=row[matched_at],
                    first=seen[key],
                    second=line,
                )
            )
        seen[key] = line
        learner = by_key.get(key)
        if learner is None:
            done.not_in_gradebook.append(f"{row[matched_at].strip()} (line {line}: {row[0]})")
            continue
        total = totals.get(learner)
        if total is None and not missing_as_zero:
            row[index] = ""
            done.empty.append(learner)
        else:
            row[index] = _cell(points(total or 0.0))
        done.filled += 1
    done.not_in_template = [
        learner for learner, key in keys.items() if key.strip().casefold() not in seen
    ]
    return done


def _match_column(template: CsvTemplate, lms: LmsFormat, match: str) -> int:
    found = [i for i, heading in enumerate(template.header) if heading.strip() == match.strip()]
    if not found:
        what = "learner id (or --roster-column's value)"
        columns = ", ".join(repr(h) for h in template.header)
        raise ExportError(
            NO_MATCH_COLUMN.format(path=template.path, match=match, columns=columns, what=what)
        )
    if len(found) > 1:
        raise ExportError(MATCH_TWICE.format(path=template.path, match=match))
    return found[0]


def _column(template: CsvTemplate, lms: LmsFormat, name: str, matched_at: int) -> tuple[int, bool]:
    """The column to fill and whether it is new (added at the end of the header)."""
    found = lms.columns_named(template.header, name)
    if len(found) > 1:
        headings = ", ".join(repr(template.header[i]) for i in found)
        raise ExportError(
            AMBIGUOUS_COLUMN.format(
                name=name, count=len(found), path=template.path, headings=headings
            )
        )
    if not found:
        template.header.append(_cell(name.strip()))
        return len(template.header) - 1, True
    heading = template.header[found[0]]
    if found[0] == matched_at or heading.strip() in lms.identity:
        raise ExportError(IDENTITY_COLUMN.format(name=name, heading=heading))
    return found[0], False


def _cell(text: str) -> str:
    """A cell export writes, as no spreadsheet would run it (a number stays a number)."""
    return str(spreadsheet_cell(text))
