"""Workflow-command escaping, neutralising learner text, annotations' lines, the pass rule."""

import pytest

from autograder.github.annotations import def_line
from autograder.github.workflow_commands import Annotation, escape_data, escape_property
from autograder.learner_text import (
    clean,
    for_log,
    markdown_github,
    neutralise_workflow_commands,
)
from autograder.results import ComponentResult, GradeResult, TestResult
from autograder.results.pass_rule import BAD_RULE, PassRule, PassRuleError

LEARNER_SOURCE = '''"""A learner module."""

import numpy as np


def _helper(x):
    return x


@staticmethod
def softmax(x, axis=-1):
    raise NotImplementedError


class MultiHeadAttention:
    def __init__(self, d_model, num_heads):
        pass

    def forward(self, q, k, v):
        return q
'''


def test_escape_data_escapes_percent_first():
    assert escape_data("50%\nnext\r%0A") == "50%25%0Anext%0D%250A"


def test_escape_property_also_escapes_colon_and_comma():
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_annotation_command_has_file_line_title_and_escaped_message():
    note = Annotation("error", "bad%0A::warning::x", file="pkg/a,b.py", line=7, title="T: 1")
    assert note.command() == "::error file=pkg/a%2Cb.py,line=7,title=T%3A 1::bad%250A::warning::x"
    assert Annotation("notice", "m").command() == "::notice::m"


@pytest.mark.parametrize(
    "text",
    [
        "::error::forged",
        "   ::set-output name=x::1",
        "##[error]legacy",
        "##vso[task.setvariable]x",
        "fine\r::add-mask::secret",
        "\x1b[2K::stop-commands::abc",
    ],
)
def test_no_line_of_neutralised_text_is_a_workflow_command(text):
    for line in neutralise_workflow_commands(text).split("\n"):
        stripped = line.lstrip()
        assert not stripped.startswith(("::", "##[", "##vso[")), line


def test_neutralising_keeps_the_text_readable():
    assert neutralise_workflow_commands("ok\n::error::x") == "ok\n> ::error::x"


def test_for_log_caps_learner_text():
    text = for_log("x" * 5000, 100)
    assert text.startswith("x" * 100) and "4900 more characters cut" in text
    assert len(text) < 200


def test_markdown_github_cannot_forge_a_table_or_mention_anyone():
    text = markdown_github("| 100 / 100 |\n<img src=x onerror=alert(1)> @teacher ::error::x")
    assert "|" not in text.replace("\\|", "")
    assert "<img" not in text and "@teacher" not in text
    assert "\n" not in text


def test_existing_clean_is_unchanged_by_the_github_additions():
    assert clean("a\x1b[31mb\r\nc") == "ab\nc"


def test_def_line_finds_the_called_function_and_method():
    assert def_line(LEARNER_SOURCE, "softmax(x, axis=1) is not implemented yet") == 11
    assert def_line(LEARNER_SOURCE, "MultiHeadAttention.forward(...) raised ValueError") == 19
    assert def_line(LEARNER_SOURCE, "MultiHeadAttention(...) is not implemented yet") == 16
    # as the grade tells it: results.capitalised puts "The call" before a lowercase call
    two = "def first(x):\n    pass\n\n\ndef second(x):\n    pass\n"
    assert def_line(two, "The call second(x) raised ValueError at line 6") == 5


def test_def_line_falls_back_to_the_first_public_definition():
    assert def_line(LEARNER_SOURCE, "Something else went wrong.") == 11


def test_def_line_of_a_syntax_error_is_the_error_line():
    assert def_line("x = 1\ndef f(:\n    pass\n", "f() failed") == 2


def _result(score: float, all_pass: bool) -> GradeResult:
    status = "passed" if all_pass else "failed"
    test = TestResult(name="t", nodeid="n", component="c", status=status)
    component = ComponentResult("c", "C", score, 100.0, int(all_pass), 1)
    return GradeResult("sub", "Course", [test], [component], score, 100.0, False, 0)


def test_pass_rule_all_needs_every_test():
    rule = PassRule.parse("all")
    assert rule.passed(_result(100, True)) and not rule.passed(_result(99, False))
    assert str(rule) == "all"


def test_pass_rule_min_score():
    rule = PassRule.parse("min_score:70")
    assert rule.passed(_result(70, False)) and not rule.passed(_result(69.99, False))
    assert "below the minimum of 70.00" in rule.verdict(_result(50, False))
    assert str(rule) == "min_score:70"


@pytest.mark.parametrize("text", ["", "most", "min_score:", "min_score:-1", "min_score:7O"])
def test_bad_pass_rule_is_a_sentence(text):
    with pytest.raises(PassRuleError) as error:
        PassRule.parse(text)
    assert str(error.value) == BAD_RULE.format(value=text.strip())


def test_a_forbidden_call_charged_from_a_helper_file_is_not_annotated_at_its_line(tmp_path):
    # The helper's line number means nothing in the component's own file.
    from pathlib import Path

    from autograder.config import load_course
    from autograder.github.annotations import component_annotations
    from autograder.results import build_grade

    toy = Path(__file__).resolve().parents[1] / "framework" / "toy_course"
    config = load_course(toy / "course.toml")
    (tmp_path / "scale.py").write_text("import numpy\n\n\ndef scale(x, factor):\n    pass\n")
    (tmp_path / "normalize.py").write_text("\n\ndef normalize(v):\n    pass\n")
    tests = [
        TestResult(name=c, nodeid=f"x::{c}", component=c, weight=1.0, status="passed")
        for c in ("scale", "normalize")
    ]
    records = [
        ("numpy.linalg.norm", "helpers.py", 40, "scale"),
        ("numpy.linalg.norm", "normalize.py", 2),
    ]
    result = build_grade(
        config, tests, submission="s", seed=0, hidden_included=False, forbidden=records
    )
    lines = {a.file: a.line for a in component_annotations(config, result, tmp_path)}
    assert lines == {"toypkg/scale.py": 4, "toypkg/normalize.py": 2}


def test_the_line_the_first_failure_names_in_the_components_file_is_annotated(tmp_path):
    """kofi's time-out was annotated at `def forward`, not at the loop's line the sentence
    names; a line the file does not have, or another file's, falls back to the definition."""
    from pathlib import Path

    from autograder.config import load_course
    from autograder.github.annotations import component_annotations, named_line
    from autograder.results import build_grade

    toy = Path(__file__).resolve().parents[1] / "framework" / "toy_course"
    config = load_course(toy / "course.toml")
    (tmp_path / "scale.py").write_text("\n\ndef scale(x, factor):\n    while True:\n        pass\n")
    (tmp_path / "normalize.py").write_text("\n\ndef normalize(v):\n    pass\n")
    stopped = (
        "scale(...) did not finish. When it was stopped, it was running toypkg/scale.py:5 in scale."
    )
    tests = [
        TestResult("a", "x::a", "scale", status="passed"),
        TestResult("b", "x::b", "scale", message=stopped),
        TestResult(
            "c", "x::c", "normalize", message="normalize(...) raised at toypkg/normalize.py:9."
        ),
    ]
    result = build_grade(config, tests, submission="s", seed=0, hidden_included=False)
    lines = {a.file: a.line for a in component_annotations(config, result, tmp_path)}
    assert lines == {"toypkg/scale.py": 5, "toypkg/normalize.py": 3}
    assert named_line("at toypkg/scale.py:12 in f", "toypkg/scale.py") == 12
    assert named_line("at other/toypkg/scale.py:12", "toypkg/scale.py") == 0
    assert named_line("no line here", "toypkg/scale.py") == 0


def test_the_comments_table_cuts_a_long_problem_at_a_word_and_keeps_where():
    """The pull-request comment's cell ends with the place (as the terminal does), not with
    "<br>… (12 more characters cut)" in the middle of the sentence that says where."""
    from autograder.github.summary import PROBLEM_LIMIT, score_table

    words = " ".join(f"word{i:03d}" for i in range(45))  # one sentence, past the limit
    place = "Look at assignments/t101/encoder.py:27, the line that makes the layers."
    problem = f"{words}. {place}"
    assert len(problem) > PROBLEM_LIMIT
    component = ComponentResult("c", "C", 50.0, 100.0, 0, 1, problem=problem)
    test = TestResult(name="t", nodeid="n", component="c", status="failed")
    result = GradeResult("sub", "Course", [test], [component], 50.0, 100.0, False, 0)
    row = score_table(result)[2]
    continued = "… (continued in the job summary of this run)"
    assert row.endswith(f"{continued} {place} |")
    assert row.startswith("| C | 50.00 / 100.00 | 0 / 1 | word000")
    assert "<br>" not in row and "characters cut" not in row


def test_the_workflows_note_says_who_runs_the_hidden_tests_and_where_their_grade_shows():
    """It ended "...once their next grading run has reached it": reached what, and when?"""
    from autograder.github.summary import hidden_not_run

    assert hidden_not_run("Transformers 101") == (
        "Only the visible tests ran here: the hidden tests are run by your instructor, not by "
        "this workflow. After your instructor's next grading run, your score with the hidden "
        "tests appears on the commit they graded, as the commit status **Transformers 101 / "
        "hidden tests**, and in a comment on your pull request when your instructor posts one."
    )
