"""`autograder export` into Canvas and Moodle templates built from their documented formats
(tests/batch/lms_templates): one column filled with the gradebook's totals, every other byte
as the LMS wrote it; learners matched on the LMS's column, unmatched ones listed."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import cli
from autograder.commands import export
from autograder.lms import fill
from autograder.lms.template import read_template

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course.toml"
TEMPLATES = Path(__file__).resolve().parent / "lms_templates"
CANVAS = TEMPLATES / "canvas_gradebook.csv"
MOODLE = TEMPLATES / "moodle_grades.csv"
GRADEBOOK = (
    "learner,commit,commit_time,late,softmax,total,max_score,tamper,errors,duration_s,graded_at\n"
    "amara,,,,10.00,100.00,100.00,,,1.0,2026-12-01T10:00:00+00:00\n"
    "ben,,,,0.00,42.50,100.00,,,1.0,2026-12-01T10:00:00+00:00\n"
    "chidi,,,,10.00,30.00,100.00,,,1.0,2026-12-01T10:00:00+00:00\n"
    "kofi,,,,,,,,The grader itself failed on this repository.,1.0,2026-12-01T10:00:00+00:00\n"
)


@pytest.fixture
def graded(tmp_path: Path) -> Path:
    out = tmp_path / "class"
    out.mkdir()
    (out / "gradebook.csv").write_text(GRADEBOOK, encoding="utf-8")
    return out


def _export(graded: Path, out: Path, **options) -> int:
    settings = dict(canvas=None, moodle=None, course=COURSE, column="Transformers 101")
    return export.main(out_dir=graded, out=out, **{**settings, **options})


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\r\n")


def test_canvas_fills_one_column_and_keeps_every_other_byte(graded, tmp_path, capsys) -> None:
    out = tmp_path / "canvas_import.csv"
    assert _export(graded, out, canvas=CANVAS) == export.EXIT_UNMATCHED
    before, after = _lines(CANVAS), _lines(out)
    assert after[0] == before[0] and after[0].startswith(b"\xef\xbb\xbfStudent,ID,SIS User ID")
    changed = {
        1: b"    Points Possible,,,,,100.00,10.00,",  # the course's total, not the template's 50
        2: b'"Okafor, Amara",1001,S1001,amara,T101 Section A,100.00,9.00,',
        3: b'"Kowalski, Ben",1002,S1002,Ben,T101 Section A,42.50,7.00,',  # Ben is ben
        4: b'"Mensah, Kofi",1003,S1003,kofi,T101 Section B,,8.00,',  # an error row: empty
    }
    for line, start in changed.items():
        assert after[line].startswith(start), after[line]
        assert after[line].split(b",")[-6:] == before[line].split(b",")[-6:]
    assert after[5:] == before[5:]  # zed, the test student and the final CRLF: untouched
    assert len(after) == len(before)
    err = capsys.readouterr().err
    assert export.NOT_IN_TEMPLATE.format(lms="Canvas", who="chidi") in err
    assert (
        "zed (line 6: Nguyen, Zed)" in err
        and "line 7: Student, Test, whose SIS Login ID is empty" in err
    )
    assert export.EMPTY_ROWS.format(count=1, s="", who="kofi") in err
    assert "The points row said 50.00 for 'Transformers 101 (4821)'; it now says 100.00" in err
    assert "No learner matched" not in err  # three did


def test_a_new_column_is_added_at_the_end_with_the_course_total(graded, tmp_path, capsys) -> None:
    out = tmp_path / "canvas_import.csv"
    assert _export(graded, out, canvas=CANVAS, column="T101 final grade") == export.EXIT_UNMATCHED
    rows = list(csv.reader(out.read_text(encoding="utf-8-sig").splitlines()))
    assert rows[0][-1] == "T101 final grade" and len(rows[0]) == 14
    assert [row[-1] for row in rows[1:6]] == ["100.00", "100.00", "42.50", "", ""]
    assert export.ADDED.format(lms="Canvas") in capsys.readouterr().out


def test_missing_as_zero_exports_zero_for_a_row_without_a_grade(graded, tmp_path) -> None:
    out = tmp_path / "canvas_import.csv"
    _export(graded, out, canvas=CANVAS, missing_as_zero=True)
    assert _lines(out)[4].startswith(b'"Mensah, Kofi",1003,S1003,kofi,T101 Section B,0.00,8.00,')


def test_moodle_matches_on_email_from_the_roster_and_keeps_its_quoting(
    graded, tmp_path, capsys
) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "learner,repo,email\namara,a,amara@example.org\nben,b,BEN@example.org\n"
        "chidi,c,chidi@example.org\nkofi,k,kofi@example.org\n"
    )
    out = tmp_path / "moodle_import.csv"
    code = _export(graded, out, moodle=MOODLE, roster=roster, roster_column_name="email")
    assert code == export.EXIT_UNMATCHED  # chidi has no Moodle row, zed no grade here
    assert out.read_text(encoding="utf-8").splitlines() == [
        '"First name","Last name","ID number",Institution,Department,"Email address",'
        '"Assignment: Transformers 101 (Real)","Last downloaded from this course"',
        "Amara,Okafor,1001,,,amara@example.org,100.00,1764662400",
        "Ben,Kowalski,1002,,,ben@example.org,42.50,1764662400",
        'Kofi,"Mensah Jr",1003,,,kofi@example.org,,1764662400',
        "Zed,Nguyen,1004,,,zed@example.org,-,1764662400",
    ]
    assert "zed@example.org (line 5: Zed)" in capsys.readouterr().err


def test_no_learner_matched_counts_both_sides_and_names_the_matching_options(
    graded, tmp_path, capsys
) -> None:
    out = tmp_path / "moodle_import.csv"
    assert _export(graded, out, moodle=MOODLE) == export.EXIT_UNMATCHED  # ids against emails
    assert out.is_file()
    err = capsys.readouterr().err
    said = (
        "No learner matched: the gradebook's 4 learners (by learner id) and the template's 4 "
        "rows (by its column 'Email address') have no value in common, so no cell was filled. "
        "Choose the template's column with --match COLUMN, or compare it with a roster column "
        "(such as email) with --roster FILE --roster-column NAME."
    )
    assert said in err.splitlines()
    roster = tmp_path / "roster.csv"
    roster.write_text("learner,repo,email\namara,a,amara@old.example\n")
    code = _export(graded, out, moodle=MOODLE, roster=roster, roster_column_name="email")
    assert code == export.EXIT_UNMATCHED
    assert "4 learners (by the roster's column 'email')" in capsys.readouterr().err


def test_every_learner_matched_exits_zero(tmp_path) -> None:
    out_dir = tmp_path / "class"
    out_dir.mkdir()
    (out_dir / "gradebook.csv").write_text(
        GRADEBOOK.splitlines()[0] + "\n" + GRADEBOOK.splitlines()[1] + "\n"
    )
    template = tmp_path / "moodle.csv"
    template.write_text(
        MOODLE.read_text().splitlines()[0] + "\nAmara,Okafor,1001,,,amara@example.org,-,1\n"
    )
    out = tmp_path / "import.csv"
    assert (
        _export(out_dir, out, moodle=template, match="Email address", roster=None)
        == export.EXIT_UNMATCHED
    )
    template.write_text(
        MOODLE.read_text().splitlines()[0] + "\nAmara,Okafor,amara,,,a@example.org,-,1\n"
    )
    assert _export(out_dir, out, moodle=template, match="ID number") == export.EXIT_OK


def test_a_semicolon_template_keeps_its_separator(graded, tmp_path) -> None:
    template = tmp_path / "moodle;.csv"
    template.write_text(MOODLE.read_text().replace(",", ";"))
    out = tmp_path / "import.csv"
    _export(graded, out, moodle=template, match="ID number")
    assert out.read_text().splitlines()[0].count(";") == 7


def test_a_template_without_the_match_column_is_refused(graded, tmp_path, capsys) -> None:
    assert (
        _export(graded, tmp_path / "x.csv", moodle=MOODLE, match="SIS Login ID") == export.EXIT_BAD
    )
    err = capsys.readouterr().err
    assert f"The template {MOODLE} has no column 'SIS Login ID' to match learners on" in err
    assert "'Email address'" in err and not (tmp_path / "x.csv").exists()


def test_a_duplicate_match_key_is_refused(graded, tmp_path, capsys) -> None:
    template = tmp_path / "canvas.csv"
    template.write_bytes(CANVAS.read_bytes().replace(b"S1004,zed", b"S1004,amara"))
    assert _export(graded, tmp_path / "x.csv", canvas=template) == export.EXIT_BAD
    assert fill.DUPLICATE_KEY.format(
        path=template, match="SIS Login ID", key="amara", first=3, second=6
    ) in (capsys.readouterr().err)


def test_an_identity_column_or_an_ambiguous_name_is_refused(graded, tmp_path, capsys) -> None:
    assert _export(graded, tmp_path / "x.csv", canvas=CANVAS, column="Section") == export.EXIT_BAD
    assert "--column 'Section' is the template's 'Section' column" in capsys.readouterr().err
    template = tmp_path / "canvas.csv"
    template.write_bytes(CANVAS.read_bytes().replace(b"Quiz 1 (4822)", b"Transformers 101 (4822)"))
    assert _export(graded, tmp_path / "x.csv", canvas=template) == export.EXIT_BAD
    assert "--column 'Transformers 101' names 2 columns" in capsys.readouterr().err


def test_the_template_is_never_written_over(graded, tmp_path, capsys) -> None:
    template = tmp_path / "canvas.csv"
    shutil.copy(CANVAS, template)
    assert _export(graded, template, canvas=template) == export.EXIT_BAD
    assert template.read_bytes() == CANVAS.read_bytes()


def test_templates_read_and_written_untouched_are_the_same_bytes() -> None:
    for path in (CANVAS, MOODLE):
        template = read_template(path)
        assert template.render() == path.read_bytes()
    assert (read_template(CANVAS).bom, read_template(CANVAS).newline) == (True, "\r\n")
    assert read_template(MOODLE).style == "spaces"


def test_the_command_line_runs_export(graded, tmp_path) -> None:
    out = tmp_path / "canvas_import.csv"
    args = ["export", str(graded), "--canvas", str(CANVAS), "--column", "Transformers 101"]
    done = CliRunner().invoke(cli, [*args, "--out", str(out), "--course", str(COURSE)])
    assert done.exit_code == export.EXIT_UNMATCHED, done.output
    assert "Wrote" in done.output and out.is_file()


def _graded_with_notebook(graded: Path, tmp_path: Path) -> None:
    """amara's record holds the notebook (autograded part only, as every record does)."""
    from autograder.gradebook import store

    staged = tmp_path / "staged"
    staged.mkdir()
    record = store.LearnerRecord(
        "amara", components={"softmax": 10.0, "notebook": 18.0}, total=118.0, max_score=120.0
    )
    store.commit_learner(graded, staged, record)


def test_the_points_row_counts_the_answers_graded_by_hand(graded, tmp_path, capsys) -> None:
    _graded_with_notebook(graded, tmp_path)
    out = tmp_path / "canvas_import.csv"
    _export(graded, out, canvas=CANVAS)
    # 100 for the components, 20 for the notebook's autograded cells, 5 for its written answer
    assert _lines(out)[1].startswith(b"    Points Possible,,,,,125.00,"), _lines(out)[1]
    assert "it now says 125.00" in capsys.readouterr().err


def test_without_notebooks_the_points_row_is_the_components(graded, tmp_path) -> None:
    out = tmp_path / "canvas_import.csv"
    _export(graded, out, canvas=CANVAS)
    assert _lines(out)[1].startswith(b"    Points Possible,,,,,100.00,")


def test_without_course_the_course_the_class_was_graded_with_is_used(
    graded, tmp_path, monkeypatch
) -> None:
    """Export run from another folder (no course.toml above it) takes the course file that
    DIR/run.json says the class was graded with, as grade-class writes it."""
    from autograder.gradebook import store

    store.write_run(graded, "", "digest", options={"--course": str(COURSE)})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    out = tmp_path / "canvas_import.csv"
    args = ["export", str(graded), "--canvas", str(CANVAS), "--column", "Transformers 101"]
    done = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert done.exit_code == export.EXIT_UNMATCHED, done.output
    assert _lines(out)[1].startswith(b"    Points Possible,,,,,100.00,")
