"""Report writers: sanitising learner text, summary.md, junit.xml, results.json, the table."""

import json
import re
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml
from rich.console import Console

from autograder.config import load_course
from autograder.reports import junit, results_json, summary_md, terminal
from autograder.results import TestResult, Ungraded, build_grade

TOY = Path(__file__).parent / "toy_course"
HOSTILE = "A | b `c` <script>alert(1)</script> **bold** [link](x)\n\x1b[31mred\x1b[0m\x07\r\nend"


@pytest.fixture(scope="module")
def result():
    config = load_course(TOY / "course.toml")
    tests = [
        TestResult("values", "t::values", "scale", status="passed"),
        TestResult("rejects | nan", "t::nan", "scale", weight=2, message=HOSTILE),
        TestResult("unit", "t::unit", "normalize", message="Short.", output="```\n" + HOSTILE),
        TestResult(
            "hidden",
            "t::hidden",
            "normalize",
            message="Hid.",
            visibility="hidden",
            output="SECRET hidden-test output",
        ),
    ]
    return build_grade(
        config,
        tests,
        submission="bob | <i>",
        seed=0,
        hidden_included=True,
        grader_errors=["t::x: KeyError: 'k'"],
        started_at="2024-01-01T00:00:00+00:00",
    )


def test_summary_has_total_table_and_one_sentence_per_failing_test(result):
    text = summary_md.render_summary(result)
    lines = text.splitlines()
    assert lines[0] == "# Toy Course: grade for bob | &lt;i>"
    assert summary_md.TOTAL.format(score="3.33", max_score="15.00") in lines
    assert lines[4] == (
        "4 tests (hidden tests included) on the random inputs of `--seed 0`; "
        "started 2024-01-01T00:00:00+00:00."
    )
    table = [line for line in lines if line.startswith("| ")]
    assert table[0] == "| Component | Score | Tests passed | First problem |"
    assert table[1] == "| --- | ---: | ---: | --- |"
    assert table[2].startswith("| Scaling | 3.33 / 10.00 | 1 / 2 | A \\| b")
    assert table[3] == "| Normalizing | 0.00 / 5.00 | 0 / 2 | Short. |"
    for row in table:  # every row keeps exactly four cells
        assert row.replace("\\|", "").count("|") == 5
    after_table = lines.index(table[-1]) + 1
    assert lines[after_table : after_table + 3] == [
        "",
        "Tests are weighted, so a component's score is not its share of tests passed: each "
        "test's points are in results.json.",
        "",
    ]
    assert summary_md.TO_FIX in lines
    assert "- **Scaling**: A | b `c`" in text  # no table: the pipe is plain
    assert "- **Normalizing**: Hid. Found by 1 test:\n  - 1 hidden test\n" in text  # unnamed
    assert "\x1b" not in text
    assert "````text\n  ```\n" in text  # learner output fenced, the fence longer than its runs
    outside_fences = re.sub(r"````text\n.*?\n  ````", "", text, flags=re.S)
    assert "<script>" not in outside_fences  # raw HTML only inside a code block
    assert "SECRET" not in text  # no output from hidden tests
    assert summary_md.GRADER_ERRORS_HEADING in lines


def test_summary_caps_long_messages():
    config = load_course(TOY / "course.toml")
    long = TestResult("t", "t::t", "scale", message="word " * 2000)
    text = summary_md.render_summary(
        build_grade(config, [long], submission="s", seed=0, hidden_included=False)
    )
    assert len(text) < 5000
    assert "more characters cut" in text


def test_junit_xml_parses_with_one_suite_per_component(result, tmp_path):
    path = junit.write_junit(result, tmp_path / "junit.xml")
    document = JUnitXml.fromfile(str(path))
    suites = {suite.name: suite for suite in document}
    assert list(suites) == ["scale", "normalize"]
    assert (suites["scale"].tests, suites["scale"].failures) == (2, 1)
    assert (suites["normalize"].tests, suites["normalize"].failures) == (2, 2)
    cases = {case.name: case for case in suites["scale"]}
    assert cases["values"].is_passed
    (failure,) = cases["rejects | nan"].result
    assert isinstance(failure, Failure)
    assert failure.message == "A | b `c` <script>alert(1)</script> **bold** [link](x)"
    assert "\x1b" not in path.read_text(encoding="utf-8")
    cases = {case.name: case for case in suites["normalize"]}
    assert "```" in cases["unit"].system_out  # a visible test's output is kept
    assert cases["hidden"].system_out is None  # a hidden test's may hold its inputs
    assert "SECRET" not in path.read_text(encoding="utf-8")


def test_junit_statistics_are_counted_once_per_suite(result, monkeypatch):
    """junitparser's add_testcase counted a suite's statistics again after every case."""
    from junitparser import TestSuite

    counted = []
    count = TestSuite.update_statistics
    monkeypatch.setattr(TestSuite, "update_statistics", lambda s: counted.append(count(s)))
    document = junit.build_junit(result)
    assert len(counted) == len(result.components)
    assert (document.tests, document.failures) == (4, 3)
    for suite in document:
        assert suite.time == round(sum(case.time for case in suite), 3)


def test_results_json_is_written_atomically_and_reads_back(result, tmp_path):
    path = results_json.write_results_json(result, tmp_path / "out" / "results.json")
    assert json.loads(path.read_text(encoding="utf-8")) == result.to_gradescope()
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]  # no temporary left


def test_terminal_table_prints_learner_text_literally(result):
    console = Console(record=True, width=200, color_system=None)
    terminal.print_submission(result, console)
    text = console.export_text()
    assert "Scaling" in text and "3.33 / 10.00" in text and "3.33 / 15.00" in text
    assert "1 / 4" in text  # tests passed, in the footer
    assert "A | b `c` <script>alert(1)</script> **bold** [link](x)" in text


def test_terminal_rich_markup_in_learner_text_is_not_interpreted():
    config = load_course(TOY / "course.toml")
    test = TestResult("t", "t::t", "scale", message="[bold red]boom[/bold red] here.")
    graded = build_grade(config, [test], submission="s", seed=0, hidden_included=False)
    console = Console(record=True, width=200, color_system=None)
    terminal.print_class([graded, Ungraded("gone", "It was missing.")], console)
    terminal.print_submission(graded, console)
    text = console.export_text()
    assert "[bold red]boom[/bold red] here." in text
    assert "not graded: It was missing." in text
    assert "Class overview" in text


def test_class_overview_names_the_components_that_lost_points_and_fits_80_columns():
    """By title (as each submission's own table), with the points lost, one a line."""
    config = load_course(TOY / "course.toml")
    tests = [
        TestResult("a", "t::a", "scale", status="failed", message="Wrong."),
        TestResult("b", "t::b", "normalize", status="passed"),
    ]
    both = build_grade(
        config,
        [
            TestResult("e", "t::e", "scale", status="failed", message="Wrong."),
            TestResult("f", "t::f", "normalize", status="passed"),
            TestResult("g", "t::g", "normalize", status="failed", message="Wrong."),
        ],
        submission="ada",
        seed=0,
        hidden_included=False,
    )
    partial = build_grade(config, tests, submission="sam", seed=0, hidden_included=False)
    full = build_grade(
        config,
        [
            TestResult(n, f"t::{n}", c, status="passed")
            for n, c in (("c", "scale"), ("d", "normalize"))
        ],
        submission="kim",
        seed=0,
        hidden_included=False,
    )
    console = Console(record=True, width=80, color_system=None)
    terminal.print_class([partial, full, both], console)
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    (sam,) = [line for line in lines if "sam" in line]
    assert "5.00 / 15.00" in sam and "Scaling (-10.00)" in sam and "Normalizing" not in sam
    ada = lines.index(next(line for line in lines if "ada" in line))
    assert "2.50 / 15.00" in lines[ada] and "Scaling (-10.00)" in lines[ada]
    assert "Normalizing (-2.50)" in lines[ada + 1] and "ada" not in lines[ada + 1]
    (kim,) = [line for line in lines if "kim" in line]
    assert "15.00 / 15.00" in kim and "nothing" in kim


def test_class_overview_loses_the_difference_of_the_points_it_shows():
    """ivan's row read "15.63 / 25.00" and "(-9.38)": the exact loss 9.375 rounded, where
    the numbers on screen give 9.37."""
    config = load_course(TOY / "course.toml")  # scale 10 points, normalize 5
    tests = [TestResult(f"s{i}", f"t::s{i}", "scale", status="passed") for i in range(9)]
    tests += [TestResult(f"f{i}", f"t::f{i}", "scale", message="Off.") for i in range(7)]
    tests.append(TestResult("n", "t::n", "normalize", status="passed"))
    ivan = build_grade(config, tests, submission="ivan", seed=0, hidden_included=False)
    assert ivan.components[0].score == 5.625  # 9 of 16 equal tests of 10 points
    console = Console(record=True, width=80, color_system=None)
    terminal.print_class([ivan], console)
    (row,) = [line for line in console.export_text().splitlines() if "ivan" in line]
    assert "10.63 / 15.00" in row and "Scaling (-4.37)" in row


def test_class_overview_lists_no_component_whose_shown_points_are_whole():
    """A loss of less than half a cent shows as full points, so it is no "(-0.00)" either."""
    config = load_course(TOY / "course.toml")
    tests = [TestResult(f"s{i}", f"t::s{i}", "scale", status="passed") for i in range(2999)]
    tests.append(TestResult("f", "t::f", "scale", message="Off."))
    tests.append(TestResult("n", "t::n", "normalize", status="passed"))
    near = build_grade(config, tests, submission="near", seed=0, hidden_included=False)
    assert 0 < near.components[0].max_score - near.components[0].score < 0.005
    console = Console(record=True, width=80, color_system=None)
    terminal.print_class([near], console)
    (row,) = [line for line in console.export_text().splitlines() if "near" in line]
    assert "15.00 / 15.00" in row and "nothing" in row and "-0.00" not in row


def test_summary_lists_a_named_mistake_once_with_the_tests_that_found_it():
    config = load_course(TOY / "course.toml")
    sentence = "[scale/added] You added the factor; multiply by it. Read: course notes, Scaling."
    tests = [
        TestResult(
            "a", "t::a", "scale", status="failed", message=f"Known mistake in f(1): {sentence}"
        ),
        TestResult(
            "b", "t::b", "scale", status="failed", message=f"Known mistake in f(2): {sentence}"
        ),
        TestResult("c", "t::c", "scale", status="failed", message="Something else. More."),
    ]
    result = build_grade(config, tests, submission="s", seed=0, hidden_included=False)
    text = summary_md.render_summary(result).split(summary_md.TO_FIX_NOTE, 1)[1]
    assert text.count("You added the factor") == 1
    assert "Read: course notes, Scaling. Found by 2 tests:\n  - a\n  - b\n" in text
    assert "- **Scaling**: Something else. More. Found by 1 test:\n  - c\n" in text


def test_summary_groups_a_repeated_message_and_never_names_hidden_tests():
    config = load_course(TOY / "course.toml")
    stub = "scale(...) is not implemented yet."
    tests = [
        TestResult("a", "t::a", "scale", status="failed", message=stub),
        TestResult("secret_b", "t::b", "scale", status="failed", message=stub, visibility="hidden"),
        TestResult(
            "secret_c", "t::c", "normalize", status="failed", message="Off.", visibility="hidden"
        ),
    ]
    result = build_grade(config, tests, submission="s", seed=0, hidden_included=True)
    text = summary_md.render_summary(result).split(summary_md.TO_FIX_NOTE, 1)[1]
    assert text.count(stub) == 1
    assert f"{stub} Found by 2 tests:\n  - a\n  - 1 hidden test\n" in text
    assert "- **Normalizing**: Off. Found by 1 test:\n  - 1 hidden test" in text
    assert "secret" not in text


def test_a_long_first_problem_is_cut_at_a_word_boundary_and_wrapped_at_words():
    config = load_course(TOY / "course.toml")
    words = "Word000 " + " ".join(f"word{i:03d}" for i in range(1, 60))  # 479 characters
    tests = [
        TestResult("t", "t::t", "scale", status="failed", message=f"{words}."),
        TestResult("u", "t::u", "normalize", status="passed"),
    ]
    graded = build_grade(config, tests, submission="s", seed=0, hidden_included=False)
    (line,) = terminal.first_problems(graded)
    # 'Scaling: ' then the 34 whole words that fit in terminal.PROBLEM_LIMIT with the note.
    kept = "Word000 " + " ".join(f"word{i:03d}" for i in range(1, 34))
    assert line.plain == f"Scaling: {kept}… (continued in summary.md)"
    console = Console(record=True, width=80, color_system=None)
    terminal.print_submission(graded, console)
    lines = console.export_text().splitlines()
    start = lines.index("First problem per component:") + 1
    wrapped = " ".join(lines[start:]).split()
    assert max(len(line) for line in lines) <= 80
    assert " ".join(wrapped[1:]) == f"{kept}… (continued in summary.md)"  # none cut


def test_two_submission_tables_are_apart_when_the_first_has_no_problem():
    config = load_course(TOY / "course.toml")
    full = [
        TestResult("c", "t::c", "scale", status="passed"),
        TestResult("d", "t::d", "normalize", status="passed"),
    ]
    console = Console(record=True, width=80, color_system=None)
    for name in ("kim", "sam"):
        graded = build_grade(config, full, submission=name, seed=0, hidden_included=False)
        terminal.print_submission(graded, console)
    lines = console.export_text().splitlines()
    second = next(i for i, line in enumerate(lines) if "sam" in line)
    table_end = max(i for i, line in enumerate(lines[:second]) if line.startswith("└"))
    assert lines[second - 1] == ""
    shown = " ".join(line.strip() for line in lines[table_end + 1 : second - 1])
    assert shown == terminal.VISIBLE_ONLY  # no hidden tests ran
    assert lines[-1] == ""


def test_the_table_says_nothing_of_hidden_tests_when_they_ran():
    config = load_course(TOY / "course.toml")
    full = [TestResult("c", "t::c", "scale", status="passed")]
    console = Console(record=True, width=200, color_system=None)
    graded = build_grade(config, full, submission="kim", seed=0, hidden_included=True)
    terminal.print_submission(graded, console)
    assert "hidden" not in console.export_text()


def test_summary_lists_the_tests_of_a_shared_message_one_a_line_whatever_their_names():
    """A test name may itself hold '; ' or ', ' (a parametrized id): one name a line."""
    config = load_course(TOY / "course.toml")
    names = ["test_mask[causal; 2 heads]", "test_mask[padding, 1 head]"]
    tests = [
        TestResult(n, f"t::{n}", "scale", status="failed", message="Masked too much.")
        for n in names
    ]
    result = build_grade(config, tests, submission="s", seed=0, hidden_included=False)
    text = summary_md.render_summary(result).split(summary_md.TO_FIX_NOTE, 1)[1]
    item = text.strip().splitlines()
    assert item[0] == "- **Scaling**: Masked too much. Found by 2 tests:"
    assert item[1:] == ["  - test_mask[causal; 2 heads]", "  - test_mask[padding, 1 head]"]


def test_a_left_out_name_cannot_write_markdown_into_the_summary(result):
    """H35: a symbolic link named with a line break and a heading made a heading of its own."""
    from dataclasses import replace

    from autograder.results import GradedCommit

    name = "evil\n# Injected [click](javascript:alert(1)) <b>bold</b> | pipe"
    graded = GradedCommit("a" * 40, "2026-08-10T12:00:00+00:00", left_out=((name, "why"),))
    text = summary_md.render_summary(replace(result, graded=graded))
    assert "Left out of your commit" in text
    assert not [line for line in text.splitlines() if line.startswith("# Injected")]
    assert "<b>bold" not in text and "[click](javascript" not in text  # escaped, not rendered


def test_the_grading_status_moves_with_each_test_and_stays_off_a_file():
    """A learner whose code runs out of time saw a silent terminal for 20 s (H40); a status
    line now says which test runs. Without a terminal (a file, CI) nothing is shown."""

    class Status:
        def __init__(self):
            self.shown = []

        def update(self, text):
            self.shown.append(text)

    ticker = terminal.GradingTicker(Status(), "kim")
    ticker.total = 3  # the session's collected tests (grading/in_process.py)
    ticker.pytest_runtest_logstart("t::a", None)
    ticker.pytest_runtest_logstart("t::b", None)
    assert ticker.status.shown == ["Grading kim: test 1 of 3", "Grading kim: test 2 of 3"]
    with terminal.grading_status("kim") as nothing:  # pytest captures stderr: not a terminal
        assert nothing is None
