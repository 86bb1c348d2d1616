"""course.toml's [ci] pass_rule: read and checked with the course file, the default of
`autograder release` (grade.yml) and `autograder grade --github`; --pass-rule overrides it."""

import shutil

import pytest

from autograder.commands import grade as grade_command
from autograder.commands import release as release_command
from autograder.config import CiSection, CourseConfigError, load_course
from autograder.results.pass_rule import PassRule

from .conftest import ROOT


def _course_file(tmp_path, ci_table: str):
    """A copy of this course's file with absolute test folders and the given [ci] table."""
    text = (ROOT / "course.toml").read_text(encoding="utf-8")
    text = text.replace('"tests/graders/', f'"{ROOT}/tests/graders/')
    start = text.index("[ci]\n")
    end = text.index("\n\n", start)
    path = tmp_path / "course.toml"
    path.write_text(text[:start] + ci_table + text[end:], encoding="utf-8")
    return path


def test_the_course_file_sets_the_pass_rule(tmp_path):
    course = load_course(_course_file(tmp_path, '[ci]\npass_rule = " min_score:60 "'))
    assert course.ci.pass_rule == "min_score:60"
    assert PassRule.parse(course.ci.pass_rule).min_score == 60


def test_without_a_ci_table_every_test_must_pass(tmp_path):
    assert load_course(_course_file(tmp_path, "")).ci.pass_rule == "all"
    assert load_course(ROOT / "course.toml").ci.pass_rule == "all"


@pytest.mark.parametrize("value", ['"score>=60"', '"min_score:"', '"ALL"', "60"])
def test_an_unknown_pass_rule_names_the_file_and_the_key(tmp_path, value):
    path = _course_file(tmp_path, f"[ci]\npass_rule = {value}")
    with pytest.raises(CourseConfigError) as error:
        load_course(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ci.pass_rule must be ")
    if value != "60":
        assert "'all' (every test must pass) or 'min_score:N'" in message
        assert message.endswith(f"got {value.replace(chr(34), chr(39))}.")


def test_an_unknown_ci_key_is_named(tmp_path):
    path = _course_file(tmp_path, '[ci]\npass_rules = "all"')
    with pytest.raises(CourseConfigError, match=r"the key ci\.pass_rules is not a course setting"):
        load_course(path)


def _with_rule(monkeypatch, module, rule: str):
    real = load_course(ROOT / "course.toml")
    patched = real.model_copy(update={"ci": CiSection(pass_rule=rule)})
    monkeypatch.setattr(module, "load_course_option", lambda course: patched)


def _workflow_rule(out) -> str:
    lines = (out / ".github/workflows/grade.yml").read_text(encoding="utf-8").splitlines()
    (line,) = [line for line in lines if line.strip().startswith("PASS_RULE:")]
    return line.split(":", 1)[1].strip().strip('"')


def test_the_release_bakes_the_course_rule_into_grade_yml_unless_overridden(tmp_path, monkeypatch):
    _with_rule(monkeypatch, release_command, "min_score:60")
    default, overridden = tmp_path / "default", tmp_path / "overridden"
    settings = dict(course=ROOT / "course.toml", notes=None)
    assert release_command.main(out=default, pass_rule=None, **settings) == 0
    assert release_command.main(out=overridden, pass_rule="all", **settings) == 0
    assert _workflow_rule(default) == "min_score:60"
    assert "reaches 60 points" in (default / "README.md").read_text(encoding="utf-8")
    assert _workflow_rule(overridden) == "all"
    shutil.rmtree(default)
    shutil.rmtree(overridden)


def test_grade_github_follows_the_course_rule_unless_overridden(tmp_path, monkeypatch):
    """The stubs score 0 on softmax: the course's min_score:0 passes, --pass-rule all fails."""
    _with_rule(monkeypatch, grade_command, "min_score:0")
    outputs = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    settings = dict(
        submissions=[ROOT / "assignments/t101"],
        course=ROOT / "course.toml",
        visible_only=True,
        test_timeout=None,
        seed=0,
        quiet=True,
        components=["softmax"],
        github=True,
    )
    assert grade_command.main(out=tmp_path / "course_rule", pass_rule=None, **settings) == 0
    assert "passed=true\n" in outputs.read_text(encoding="utf-8")
    outputs.unlink()
    assert grade_command.main(out=tmp_path / "option", pass_rule="all", **settings) == 1
    assert "passed=false\n" in outputs.read_text(encoding="utf-8")
