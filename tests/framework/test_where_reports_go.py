"""The last line of `grade` and `grade-class` names where their files went; quiet prints none."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from autograder.cli import cli
from autograder.config import load_course
from autograder.gradebook import class_output

TOY = Path(__file__).parent / "toy_course"
COURSE = TOY / "course.toml"
FILES = "results.json, summary.md, junit.xml, grader.log"


def grade(*args: str):
    return CliRunner().invoke(cli, ["grade", *args, "--course", str(COURSE)])


def last_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


def test_one_submission_ends_with_its_report_folder(tmp_path):
    out = tmp_path / "mine"
    result = grade(str(TOY / "solution"), "--out", str(out), "--visible-only")
    assert result.exit_code == 0, result.output
    assert last_line(result.stdout) == f"Reports: {out} ({FILES})"
    assert all((out / name).is_file() for name in FILES.split(", "))


def test_several_submissions_end_with_the_folder_holding_theirs(tmp_path):
    out = tmp_path / "class"
    submissions = [str(TOY / "solution"), str(TOY / "submissions" / "mistake")]
    result = grade(*submissions, "--out", str(out), "--visible-only")
    assert result.exit_code == 1, result.output
    assert last_line(result.stdout) == (
        f"Reports: one folder per submission in {out}, e.g. {out / 'solution'} ({FILES} in each)"
    )
    assert (out / "mistake" / "results.json").is_file()


def test_quiet_grade_prints_nothing_and_an_ungraded_one_no_report_line(tmp_path):
    quiet = grade(str(TOY / "solution"), "--out", str(tmp_path / "q"), "--visible-only", "-q")
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout == ""
    missing = grade(str(tmp_path / "nowhere"), "--out", str(tmp_path / "m"))
    assert missing.exit_code == 2
    assert "Reports:" not in missing.output


def test_grade_class_ends_with_the_gradebook_and_report_paths(tmp_path, capsys):
    config = load_course(COURSE)
    shown = Path("grades")
    code = class_output.finish(config, tmp_path, [], quiet=False, shown=shown)
    assert code == 0
    assert last_line(capsys.readouterr().out) == (
        "Gradebook: grades/gradebook.csv; class report: grades/report.md and report.html; "
        "each learner's reports in grades/<learner>/"
    )
    assert (tmp_path / "gradebook.csv").is_file() and (tmp_path / "report.html").is_file()


def test_quiet_grade_class_prints_no_paths(tmp_path, capsys):
    class_output.finish(load_course(COURSE), tmp_path, [], quiet=True, shown=Path("grades"))
    assert capsys.readouterr().out == ""
