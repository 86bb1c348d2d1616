"""A failing notebook test cell's message (autograder/notebook/autograde.py): its own error,
then the earlier cell that failed first, each a sentence ending with one full stop; the earlier
cell named as the learner sees it in Jupyter (its first line and section), its grade_id in
parentheses."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.notebook.autograde import _cell_message
from autograder.notebook.course import only_assignment
from autograder.notebook.nbgrader_run import LearnerReport, RunReport
from autograder.reports.sanitize import first_sentence

NOT_DONE = "NotImplementedError: Replace this line with your code; this step is not done yet."
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def labels() -> dict[str, str]:
    return only_assignment(ROOT).cell_labels()


def test_cells_are_named_by_their_first_line_and_section(labels):
    assert labels["vocab_report"] == (
        '"X_vocab, missing = lookup(vectors, VOCAB)" in section 2, "Look words up" (vocab_report)'
    )
    assert labels["plots"] == '"def plot_attention(A, words):" in section 5, "Plots" (plots)'
    assert labels["test_rows"] == (  # a long first line is cut at a word, with an ellipsis
        '"# Autograded: the attention weights are a softmax over…" in section 3, "Attention at '
        "the vectors' real width\" (test_rows)"
    )
    assert labels["setup"] == (  # a heading without a number
        '"import matplotlib.pyplot as plt" under "Class 5 homework: contextual vectors from '
        'pretrained embeddings" (setup)'
    )


def test_the_cells_error_and_the_earlier_failure_read_as_two_sentences(labels):
    report = LearnerReport(
        ok=True,
        failed=[("vocab_report", NOT_DONE), ("test_shapes", "NameError: name 'x' is not defined")],
    )
    got = {"error": "NameError: name 'x' is not defined"}
    message = _cell_message(
        "test_shapes", got, report, cell_timeout=30, graded={"test_shapes"}, labels=labels
    )
    assert message == (
        "Test cell test_shapes failed: NameError: name 'x' is not defined. An earlier cell, "
        f"{labels['vocab_report']}, failed first; fix that one first: {NOT_DONE}"
    )
    # The class report and the terminal quote the first sentence: the test's own error.
    assert first_sentence(message) == (
        "Test cell test_shapes failed: NameError: name 'x' is not defined."
    )


def test_an_error_that_ends_a_sentence_gets_no_second_full_stop():
    report = LearnerReport(ok=True, failed=[("test_rows", "AssertionError: Rows must sum to 1.")])
    got = {"error": "AssertionError: Rows must sum to 1."}
    message = _cell_message("test_rows", got, report, cell_timeout=30, graded={"test_rows"})
    assert message == "Test cell test_rows failed: AssertionError: Rows must sum to 1."
    earlier = LearnerReport(ok=True, failed=[("lookup", "KeyError: 'bank'"), *report.failed])
    message = _cell_message("test_rows", got, earlier, cell_timeout=30, graded={"test_rows"})
    assert message.endswith("failed first; fix that one first: KeyError: 'bank'.")


@pytest.mark.parametrize(
    "error, sentence",
    [
        ("nbclient.exceptions.DeadKernelError: Kernel died", "KERNEL_DIED"),
        ("OSError: [Errno 27] File too large", "OUTPUT_TOO_LARGE"),
        ("SchemaTooOldError: Outdated schema version: 0 (expected 3)", "METADATA_CHANGED"),
        (
            "ValidationError: Notebook failed to validate; the nbgrader metadata may be corrupted.",
            "METADATA_CHANGED",
        ),
        ("RuntimeError: Inconsistent checksums for cell test_lookup", "METADATA_CHANGED"),
        ("KeyError: 'something new'", "NOT_GRADED"),
    ],
)
def test_a_notebook_nbgrader_gave_up_on_says_why_when_the_reason_is_known(error, sentence):
    """H43: a kernel ended by os._exit, 100 MB printed or edited metadata all read 'check that
    it opens in Jupyter and runs with Restart & Run All', which does not help."""
    from autograder.notebook import autograde as grade

    report = RunReport(ok=True, learners={"ada": LearnerReport(ok=False, error=f"...\n{error}")})
    got = grade._run_failure(report, report.learners["ada"], only_assignment(ROOT))
    assert got == getattr(grade, sentence)
