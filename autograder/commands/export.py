"""`autograder export`: a class's totals into the instructor's LMS gradebook file.

`autograder export DIR --canvas|--moodle TEMPLATE --column NAME --out FILE`: the class's
totals into the instructor's own LMS gradebook file, ready to import.

1. read DIR/gradebook.csv (grade-class or merge wrote it): each learner's total after the late
   penalty, or none (an error row, nothing to grade, not graded yet);
2. read the template (the LMS's own export, lms/template.py) and match its rows to the
   learners (lms/fill.py): on --match (the LMS's default column) against each learner's id, or
   with --roster and --roster-column against a column of the roster (their email, say);
3. fill the --column (an assignment column it has, or a new one at the end, which the LMS
   imports as a new assignment), the points row with the course's total, and write FILE: the
   template as it came, but for that column.

Exit status: 0 every learner of the gradebook and of the template was matched; 1 FILE was
written, but some learners are on one side only (listed on stderr); 2 nothing was written (a
sentence on stderr says why).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from autograder.atomic_files import cannot_write
from autograder.config import CourseConfigError, load_course_option
from autograder.gradebook import store
from autograder.gradebook.report_build import submitted_components
from autograder.gradebook.roster import RosterError, roster_column
from autograder.learner_text import spreadsheet_row
from autograder.lms.canvas import CANVAS
from autograder.lms.fill import ExportError, Filled, fill
from autograder.lms.lms_format import LmsFormat
from autograder.lms.moodle import MOODLE
from autograder.lms.template import TemplateError, read_template

ONE_TEMPLATE = "Give one template: --canvas FILE or --moodle FILE (the LMS's own gradebook export)."
NO_GRADEBOOK = (
    "{dir} has no gradebook.csv; give the output folder of `autograder grade-class` or "
    "`autograder merge`."
)
BAD_GRADEBOOK = "{path} is not a gradebook this command can read ({detail})."
ROSTER_COLUMN_ALONE = (
    "--roster-column names a column of the roster, so it needs --roster FILE (the roster CSV "
    "grade-class read)."
)
OUT_IS_TEMPLATE = "--out {out} is the template itself; write the filled copy to another file."
WROTE = (
    "Wrote {out}: {filled} of {learners} learners' totals in the {lms} column {heading!r}{added}; "
    "{points}."
)
POINTS_ROW = "the points row says {points}"
ADDED = " (a new column: {lms} imports it as a new assignment)"
NO_POINTS_ROW = "the template has no points row"
POINTS_CHANGED = (
    "The points row said {before} for {heading!r}; it now says {after}, the course's total: "
    "set the assignment to {after} points in {lms} too, as importing points may not change it."
)
EMPTY_ROWS = (
    "{count} learner{s} without a grade exported empty, not 0 (--missing-as-zero exports 0): {who}."
)
NOT_IN_TEMPLATE = "In the gradebook but not in the template (no {lms} row to fill): {who}."
NOT_IN_GRADEBOOK = "In the template but not in the gradebook (their cell is unchanged): {who}."
NONE_MATCHED = (
    "No learner matched: the gradebook's {learners} learner{s} (by {key}) and the template's "
    "{rows} row{rows_s} (by its column {match!r}) have no value in common, so no cell was "
    "filled. Choose the template's column with --match COLUMN, or compare it with a roster "
    "column (such as email) with --roster FILE --roster-column NAME."
)
LEARNER_ID = "learner id"
ROSTER_KEY = "the roster's column {column!r}"
EXIT_OK, EXIT_UNMATCHED, EXIT_BAD = 0, 1, 2


def main(
    *,
    out_dir: Path,
    canvas: Path | None,
    moodle: Path | None,
    column: str,
    out: Path,
    match: str | None = None,
    roster: Path | None = None,
    roster_column_name: str | None = None,
    missing_as_zero: bool = False,
    course: Path | None = None,
) -> int:
    """Export out_dir's totals into a copy of the template; the exit status of the module
    docstring."""
    if (canvas is None) == (moodle is None):
        return _error(ONE_TEMPLATE)
    lms, template_path = (CANVAS, canvas) if canvas is not None else (MOODLE, moodle)
    assert template_path is not None
    if Path(out).resolve() == Path(template_path).resolve():
        return _error(OUT_IS_TEMPLATE.format(out=out))
    if roster_column_name and roster is None:
        return _error(ROSTER_COLUMN_ALONE)
    try:
        config = load_course_option(course or graded_with(Path(out_dir)))
        totals = read_totals(Path(out_dir))
        keys = _keys(totals, roster, roster_column_name)
        template = read_template(template_path)
        filled = fill(
            template,
            lms,
            column=column,
            match=match or lms.default_match,
            keys=keys,
            totals=totals,
            course_total=_course_total(config, Path(out_dir)),
            missing_as_zero=missing_as_zero,
        )
        template.write(Path(out))
    except (CourseConfigError, TemplateError, ExportError, RosterError) as error:
        return _error(str(error))
    except OSError as error:
        return _error(cannot_write(error) or str(error))
    key = ROSTER_KEY.format(column=roster_column_name) if roster_column_name else LEARNER_ID
    code = _say(filled, lms, out, learners=len(totals))
    if totals and not filled.filled:
        print(_none_matched(filled, len(totals), key, match or lms.default_match), file=sys.stderr)
    return code


def graded_with(out_dir: Path) -> Path | None:
    """The course file the class in ``out_dir`` was graded with (its run.json keeps the
    resolved --course), when that file is still there; else None (the nearest course.toml)."""
    run = store.read_run(out_dir) or {}
    given = run.get("options", {}).get("--course", "")
    return Path(given) if given and Path(given).is_file() else None


def read_totals(out_dir: Path) -> dict[str, float | None]:
    """Each learner of DIR/gradebook.csv and their total (None: the row has no grade)."""
    path = out_dir / store.GRADEBOOK_FILE
    if not path.is_file():
        raise ExportError(NO_GRADEBOOK.format(dir=out_dir))
    try:
        with path.open(newline="", encoding="utf-8") as stream:
            rows = [spreadsheet_row(row) for row in csv.DictReader(stream)]
        return {row["learner"]: float(row["total"]) if row["total"] else None for row in rows}
    except (KeyError, TypeError, ValueError, UnicodeDecodeError, csv.Error) as error:
        detail = f"no column {error}" if isinstance(error, KeyError) else str(error)
        raise ExportError(BAD_GRADEBOOK.format(path=path, detail=detail)) from None


def _keys(totals: dict, roster: Path | None, column: str | None) -> dict[str, str]:
    """Each learner's key: the roster's column when given, else their id."""
    if roster is None or not column:
        return {learner: learner for learner in totals}
    values = roster_column(Path(roster), column)
    return {learner: values.get(learner, "") for learner in totals}


def _course_total(config, out_dir: Path) -> float:
    """The course's total points: its components, and the notebook when a learner has it,
    with its answers graded by hand (the records hold them only once gradebook.csv is built,
    but the assignment is out of them from the start)."""
    from autograder.gradebook.class_output import class_components
    from autograder.notebook.hand_grades import hand_graded_columns, hand_graded_points

    graded = [r for r in store.read_records(out_dir) if not r.failed]
    by_hand = {column for column, _, _ in hand_graded_columns(config)}
    parts = [
        c for c in submitted_components(graded, class_components(config)) if c.name not in by_hand
    ]
    return sum(c.points for c in parts) + hand_graded_points(config, {c.name for c in parts})


def _say(filled: Filled, lms: LmsFormat, out: Path, *, learners: int) -> int:
    """The lines on stdout (what was written) and stderr (what needs a look); the status."""
    points = POINTS_ROW.format(points=filled.points_after) if filled.points_after else NO_POINTS_ROW
    added = ADDED.format(lms=lms.name) if filled.added else ""
    print(
        WROTE.format(
            out=out, filled=filled.filled, learners=learners, lms=lms.name,
            heading=filled.heading, added=added, points=points,
        )
    )  # fmt: skip
    if filled.points_before.strip() and _differs(filled.points_before, filled.points_after):
        print(
            POINTS_CHANGED.format(
                before=filled.points_before,
                heading=filled.heading,
                after=filled.points_after,
                lms=lms.name,
            ),
            file=sys.stderr,
        )
    if filled.empty:
        s = "" if len(filled.empty) == 1 else "s"
        print(
            EMPTY_ROWS.format(count=len(filled.empty), s=s, who=", ".join(filled.empty)),
            file=sys.stderr,
        )
    if filled.not_in_template:
        who = ", ".join(filled.not_in_template)
        print(NOT_IN_TEMPLATE.format(lms=lms.name, who=who), file=sys.stderr)
    if filled.not_in_gradebook:
        print(NOT_IN_GRADEBOOK.format(who="; ".join(filled.not_in_gradebook)), file=sys.stderr)
    return EXIT_UNMATCHED if filled.not_in_template or filled.not_in_gradebook else EXIT_OK


def _none_matched(filled: Filled, learners: int, key: str, match: str) -> str:
    """NONE_MATCHED: how many rows each side had, what was compared, the options that choose it
    (each template row with a learner is unmatched here, so they are its rows)."""
    rows = len(filled.not_in_gradebook)
    return NONE_MATCHED.format(
        learners=learners, s="" if learners == 1 else "s", key=key,
        rows=rows, rows_s="" if rows == 1 else "s", match=match,
    )  # fmt: skip


def _differs(before: str, after: str) -> bool:
    try:
        return abs(float(before) - float(after)) > 1e-9
    except ValueError:
        return before.strip() != after.strip()


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return EXIT_BAD
