"""The class report's components and order, and its most common failure messages, from
gradebook rows and results.json files alone (no grading)."""

import json

import pytest

from autograder.gradebook.report import Component, build_report, render_html, render_markdown
from autograder.gradebook.report_model import SHOWING, TOP_FAILURES, FailureRow
from autograder.gradebook.report_tests import as_sentence, normalise
from autograder.gradebook.store import LearnerRecord

PARTS = [Component("a", "Part A", 10.0), Component("notebook", "Notebook", 20.0, optional=True)]


def test_a_class_without_notebooks_is_out_of_the_course_points_only(tmp_path):
    records = [LearnerRecord("kim", components={"a": 10.0}, total=10.0, max_score=10.0)]
    report = build_report(tmp_path, records, PARTS, "Course")
    assert report.max_score == 10.0
    assert [row[0] for row in report.components] == ["Part A"]


def test_a_notebook_counts_once_some_learner_has_one(tmp_path):
    records = [
        LearnerRecord("kim", components={"a": 10.0}, total=10.0, max_score=10.0),
        LearnerRecord("sam", components={"a": 5.0, "notebook": 20.0}, total=25.0, max_score=30.0),
    ]
    report = build_report(tmp_path, records, PARTS, "Course")
    assert report.max_score == 30.0
    notebook = next(row for row in report.components if row[0] == "Notebook")
    assert notebook[1] == 20.0 and notebook[4] == 1  # mean over the one learner who has it
    assert report.notes  # says how many learners submitted it


# Most common failure messages ----------------------------------------------------------------

SCALE = (
    "[a/no-scale] Your scores are not scaled: divide by sqrt(d_k). Read: course notes, Class 06."
)

#: The one "Known mistakes" row of kim's and sam's a/no-scale.
NO_SCALE_ROW = FailureRow(
    2,
    "Part A",
    "a/no-scale",
    "Your scores are not scaled: divide by sqrt(d_k). Read: course notes, Class 06.",
    ("kim", "sam"),
)


def _results(out, learner: str, tests: list[tuple[str, str, str]]) -> LearnerRecord:
    """A learner folder holding results.json with failing tests (name, visibility, output)."""
    folder = out / learner
    folder.mkdir()
    document = {
        "tests": [
            {"name": n, "status": "failed", "output": o, "visibility": v, "tags": ["a"]}
            for n, v, o in tests
        ]
    }
    (folder / "results.json").write_text(json.dumps(document))
    return LearnerRecord(learner, components={"a": 0.0}, total=0.0, max_score=10.0)


def test_failure_rows_group_a_named_mistake_and_normalise_other_messages(tmp_path):
    gradient = (
        "the gradient of W_q.weight after a backward pass through MHA(12, 3)(q (2, 4, 12)) "
        "differs from the expected values: 144 of 144 entries differ. The largest error is 0.37."
    )
    records = [
        _results(
            tmp_path,
            "kim",
            [
                ("small", "visible", f"Known mistake in f(Q (3, 4)): {SCALE}"),
                ("large", "after_due_date", f"Known mistake in f(Q (7, 64)): {SCALE}"),
                ("grad", "visible", gradient),
            ],
        ),
        _results(
            tmp_path,
            "sam",
            [
                ("secret", "after_due_date", f"Known mistake in f(Q (5, 9, 8)): {SCALE}"),
                ("grad", "after_due_date", gradient.replace("MHA(12, 3)", "MHA(20, 5)")),
                ("stub", "visible", "softmax(...) is not implemented yet: it raised it."),
            ],
        ),
    ]
    report = build_report(tmp_path, records, PARTS, "Course")
    assert report.mistakes == [NO_SCALE_ROW]
    assert report.failures == [
        FailureRow(
            2,
            "Part A",
            "",
            "The gradient of W_q.weight after a backward pass through MHA(…)(q (…)) differs "
            "from the expected values: … of … entries differ.",
            ("kim", "sam"),
        ),
    ]
    assert report.not_implemented == [("Part A", ("sam",))]
    text = render_markdown(report)
    known = text.split("## Known mistakes")[1].split("##")[0]
    assert "| 2 | Part A | a/no-scale | Your scores are not scaled: divide by sqrt(d_k)." in known
    assert known.rstrip().endswith("Class 06. | kim, sam |")
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert (
        sections.index("## Known mistakes")
        < sections.index("## Pass rate per test (most failed first)")
        == len(sections) - 1
    )  # the longest section last
    stubs = text.split("## Not implemented yet")[1].split("##")[0]
    assert "- 1 learner has not implemented Part A yet (or part of it): sam." in stubs
    for hidden in ("5, 9, 8", "7, 64", "20, 5"):  # a hidden test's inputs
        assert hidden not in text


def test_every_known_mistake_has_its_row_and_a_cut_list_says_so(tmp_path):
    tests = [(f"m{i}", "visible", f"[a/mistake-{i}] Mistake {i} explained.") for i in range(14)]
    tests += [(f"o{i}", "visible", f"Other message {'x' * i} here.") for i in range(13)]
    tests += [("stub", "visible", "f(...) is not implemented yet: it raised it.")]
    records = [_results(tmp_path, "kim", tests), _results(tmp_path, "sam", tests[:3])]
    report = build_report(tmp_path, records, PARTS, "Course")
    assert sorted(r.mistake for r in report.mistakes) == sorted(f"a/mistake-{i}" for i in range(14))
    assert [r.learners for r in report.mistakes[:3]] == [2, 2, 2]  # most learners first
    assert (len(report.failures), report.other_failures) == (TOP_FAILURES, 13)
    text = render_markdown(report)
    assert "a/mistake-13" in text.split("## Known mistakes")[1].split("##")[0]
    assert SHOWING.format(shown=TOP_FAILURES, total=13) in text
    common = text.split("## Most common failure messages")[1].split("\n## ")[0]
    assert "not implemented yet" not in common
    html = render_html(report)
    assert "a/mistake-13" in html and SHOWING.format(shown=TOP_FAILURES, total=13) in html


def test_a_list_that_fits_is_not_said_to_be_cut(tmp_path):
    records = [_results(tmp_path, "kim", [("o", "visible", "Other message.")])]
    report = build_report(tmp_path, records, PARTS, "Course")
    assert (report.showing, report.mistakes, report.not_implemented) == ("", [], [])
    assert "Showing" not in render_markdown(report)


def test_as_sentence_starts_with_a_capital_and_keeps_code_spelled_as_written():
    assert as_sentence("the output differs.") == "The output differs."
    assert as_sentence("f(...) raised NameError: name 'x' is not defined") == (
        "The call f(...) raised NameError: name 'x' is not defined."
    )
    assert as_sentence("self_attention(...) raised ValueError.") == (
        "The call self_attention(...) raised ValueError."
    )
    assert as_sentence("MultiHeadAttention(...) is not implemented yet.") == (
        "MultiHeadAttention(...) is not implemented yet."
    )
    assert normalise("Encoder(3, 8, 2, 16) at t101/encoder.py:44 with W_1 and 1e-05") == (
        "Encoder(…) at t101/encoder.py:… with W_1 and …"
    )


def test_who_names_the_first_learners_then_counts_the_rest():
    row = FailureRow(11, "Part A", "a/no-scale", "Explained.", tuple(f"l{i:02}" for i in range(11)))
    assert row.who_text == "l00, l01, l02, l03, l04, l05, l06, l07, +3 more"
    assert FailureRow(1, "Part A", "", "Other.", ("kim",)).who_text == "kim"


def test_a_call_not_run_again_after_a_hang_is_the_same_row_as_the_hang(tmp_path):
    """H32: one infinite loop showed as two rows, 'did not finish' and 'was not run again'."""
    from autograder.runtime.harness import failures

    hang = failures.timeout("softmax(x (2, 3))", 2.0).feedback
    again = failures.not_run_after_hangs("softmax(x (4, 5))", 1, 2.0).feedback
    records = [
        _results(tmp_path, "kim", [("t1", "visible", hang), ("t2", "visible", again)]),
        _results(tmp_path, "sam", [("t2", "visible", again)]),
    ]
    report = build_report(tmp_path, records, PARTS, "Course")
    assert [(row.learners, row.who) for row in report.failures] == [(2, ("kim", "sam"))]
    assert report.failures[0].message.startswith(
        "The call softmax(x (…)) did not finish within the allowed seconds of computing (the "
        "time limit per test, counting any process it started)"
    )


@pytest.mark.parametrize(
    ("message", "row"),
    [
        (
            "f(...) did not finish within 2.5 s, most of them spent waiting rather than computing",
            "f(...) did not finish within the allowed seconds, most of them spent waiting",
        ),
        (
            "Importing a/b.py did not finish within 10 s (the time limit for importing a module)",
            "Importing a/b.py did not finish within the allowed seconds (the time limit",
        ),
        (
            "f(...) was not run: grading your submission has used the 120 s it may take in all",
            "grading your submission has used the seconds it may take in all",
        ),
        (
            "This test did not finish within 60 seconds; the cell was interrupted",
            "This test did not finish within the allowed seconds; the cell was interrupted",
        ),
    ],
)
def test_a_time_limit_left_out_of_a_row_is_said_in_words(message, row):
    """The class report read "did not finish within … s of computing", which looked like a
    glitch: the limit is left out on purpose (it differs by course and run)."""
    assert row in normalise(message)
    assert "…" not in normalise(message)


def test_a_known_mistake_at_other_lines_of_learners_files_is_one_row(tmp_path):
    """A new-user trial's class had dara's softmax-over-queries at attention.py:23 and a copy's
    at :25 as two rows of one learner each: a learner's own line is not the class's."""
    at = (
        "Your scores are not scaled: divide by sqrt(d_k). Look at a/f.py:{n}, the line. "
        "Read: course notes, Class 06."
    )
    records = [
        _results(tmp_path, name, [("t", "visible", f"Known mistake in f(Q): [a/no-scale] {at}")])
        for name, at in (("kim", at.format(n=23)), ("sam", at.format(n=25)))
    ]
    report = build_report(tmp_path, records, PARTS, "Course")
    assert report.mistakes == [NO_SCALE_ROW]


def test_mistakes_a_failure_could_not_tell_apart_are_one_row_never_the_first_alone(tmp_path):
    by_d_k = "[a/by-d-k] Your scores are divided by d_k. Read: course notes, Class 06."
    both = (
        "Known mistakes in f(Q (3, 4)), which these inputs cannot tell apart (each gives this "
        f"result): {SCALE} {by_d_k}"
    )
    records = [_results(tmp_path, "kim", [("small", "visible", both)])]
    report = build_report(tmp_path, records, PARTS, "Course")
    (row,) = report.mistakes
    assert row.mistake == "a/no-scale or a/by-d-k"
    assert row.message == (
        "Your scores are not scaled: divide by sqrt(d_k). Read: course notes, Class 06. Or: "
        "Your scores are divided by d_k. Read: course notes, Class 06."
    )
    assert row.who == ("kim",)


def test_the_pass_rate_table_lists_the_tests_some_learner_failed_and_counts_the_others(tmp_path):
    records = [
        _results(tmp_path, "kim", [("small", "visible", ""), ("large", "visible", "Off.")]),
        _results(tmp_path, "sam", [("small", "visible", ""), ("large", "visible", "Off.")]),
    ]
    for record in records:  # "small" passed for both
        path = tmp_path / record.learner / "results.json"
        document = json.loads(path.read_text())
        document["tests"][0]["status"] = "passed"
        path.write_text(json.dumps(document))
    report = build_report(tmp_path, records, PARTS, "Course")
    assert report.tests_failed == [("large", 0, 2)]
    markdown = render_markdown(report)
    assert "| large | 0 / 2 |" in markdown and "| small |" not in markdown
    assert markdown.endswith("\n\nEvery learner counted for them passed the other test.\n")
    assert "<p>Every learner counted for them passed the other test.</p>" in render_html(report)
    for record in records:  # now every test passed: no table, one sentence
        path = tmp_path / record.learner / "results.json"
        document = json.loads(path.read_text())
        document["tests"][1]["status"] = "passed"
        path.write_text(json.dumps(document))
    report = build_report(tmp_path, records, PARTS, "Course")
    markdown = render_markdown(report)
    assert "| Test | Passed |" not in markdown
    assert markdown.endswith("\n\nEvery learner counted for them passed all 2 tests.\n")
    assert "<th>Test</th>" not in render_html(report)
