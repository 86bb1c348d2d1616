"""A failing notebook test cell's message (autograder/notebook/grade.py): its own error, then the
earlier cell that failed first, each a sentence ending with one full stop."""

from __future__ import annotations

from autograder.notebook.grade import _cell_message
from autograder.notebook.sandbox import LearnerReport

NOT_DONE = "NotImplementedError: Replace this line with your code; this step is not done yet."


def test_the_cells_error_and_the_earlier_failure_read_as_two_sentences():
    report = LearnerReport(
        ok=True,
        failed=[("vocab_report", NOT_DONE), ("test_shapes", "NameError: name 'x' is not defined")],
    )
    got = {"error": "NameError: name 'x' is not defined"}
    message = _cell_message("test_shapes", got, report, cell_timeout=30, graded={"test_shapes"})
    assert message == (
        "Test cell test_shapes failed: NameError: name 'x' is not defined. An earlier cell "
        f"(vocab_report) failed first; fix that one first: {NOT_DONE}"
    )


def test_an_error_that_ends_a_sentence_gets_no_second_full_stop():
    report = LearnerReport(ok=True, failed=[("test_rows", "AssertionError: Rows must sum to 1.")])
    got = {"error": "AssertionError: Rows must sum to 1."}
    message = _cell_message("test_rows", got, report, cell_timeout=30, graded={"test_rows"})
    assert message == "Test cell test_rows failed: AssertionError: Rows must sum to 1."
    earlier = LearnerReport(ok=True, failed=[("lookup", "KeyError: 'bank'"), *report.failed])
    message = _cell_message("test_rows", got, earlier, cell_timeout=30, graded={"test_rows"})
    assert message.endswith("failed first; fix that one first: KeyError: 'bank'.")
