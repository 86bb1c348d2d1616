"""A failing notebook test cell's message (autograder/notebook/cell_messages.py): its own error as
one sentence, where it was raised, and the earlier cause the evidence shows; cells named as the
learner sees them in Jupyter (first line and section), the grade_id in parentheses. Plain
dictionaries stand in for autograded notebooks: no nbgrader needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.learner_text import first_sentence
from autograder.notebook.cell_errors import KERNEL_DIED, NOT_RUN, cell_errors, source_of
from autograder.notebook.cell_messages import (
    CELL_ENDED_KERNEL,
    EARLIER_MEMORY,
    KERNEL_WHY,
    NOT_RUN_AFTER,
    cell_message,
)
from autograder.notebook.course import only_assignment
from autograder.notebook.nbgrader_run import LearnerReport, RunReport

NOT_DONE = "Replace this line with your code; this step is not done yet."
ROOT = Path(__file__).resolve().parents[2]
TESTS = {"test_lookup", "test_rows", "test_plots"}
KEY_ERROR = ("KeyError", "'bank'")
UNDEFINED = "name 'missing_river' is not defined"
ROWS = "Rows must sum to 1."
STUB = ("NotImplementedError", NOT_DONE)
NO_W_Q = ("NameError", "name 'W_q' is not defined")


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(grade_id: str | None, text: str, count: int | None, error=None, traceback=()) -> dict:
    meta = {"nbgrader": {"grade_id": grade_id}} if grade_id else {}
    outputs = []
    if error is not None:
        ename, evalue = error
        outputs.append(
            {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": list(traceback)}
        )
    return {
        "cell_type": "code",
        "metadata": meta,
        "source": text,
        "execution_count": count,
        "outputs": outputs,
    }


def frame(count: int, line: int, function: str = "") -> str:
    """An IPython traceback entry, coloured as IPython colours it."""
    where = f", in \x1b[36m{function}\x1b[39m\x1b[34m()\x1b[39m" if function else ""
    cell = f"\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[{count}]\x1b[39m"
    return f"{cell}\x1b[32m, line {line}\x1b[39m{where}\n..."


def message(document: dict, grade_id: str) -> str:
    found = cell_errors(document)
    sources = {e.index: source_of(document, e.index) for e in found}
    return cell_message(
        grade_id, found, cell_timeout=30, memory_mb=4096, graded=TESTS, sources=sources
    )


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


def test_a_stub_raised_in_the_plots_is_blamed_on_the_plot_cell_not_an_earlier_failure():
    """The issue: a NotImplementedError in the plots was blamed on an unrelated earlier cell."""
    document = {
        "cells": [
            markdown("## 2. Look words up"),
            code(
                None,
                "print(undefined_thing)",
                3,
                ("NameError", "name 'undefined_thing' is not defined"),
            ),
            markdown("## 5. Plots"),
            code("plots", "def plot_attention(A, words):\n    raise NotImplementedError", 4),
            code(
                "test_plots",
                "# Autograded: the figures\nfig = plot_attention(A, ['a'])",
                5,
                ("NotImplementedError", NOT_DONE),
                [frame(5, 2), frame(4, 2, "plot_attention")],
            ),
        ]
    }
    assert message(document, "test_plots") == (
        f"Test cell test_plots failed: NotImplementedError: {NOT_DONE} It was raised in "
        '"def plot_attention(A, words):" in section 5, "Plots" (plots), line 2, in plot_attention.'
    )


def test_a_name_not_defined_names_the_earlier_failed_cell_that_defines_it():
    document = {
        "cells": [
            markdown("## 2. Look words up"),
            code("vocab_report", "X_vocab, missing = lookup(vectors, VOCAB)", 3, KEY_ERROR),
            markdown("## 3. Attention"),
            code("run_attention", "X, missing_river = lookup(vectors, RIVER)", 4, KEY_ERROR),
            code("test_rows", "d = len(missing_river)", 5, ("NameError", UNDEFINED)),
        ]
    }  # fmt: skip
    got = message(document, "test_rows")
    assert got == (
        "Test cell test_rows failed: NameError: name 'missing_river' is not defined. An earlier "
        'cell, "X, missing_river = lookup(vectors, RIVER)" in section 3, "Attention" '
        "(run_attention), which defines missing_river, failed first; fix that one first: "
        "KeyError: 'bank'."
    )
    # The class report and the terminal quote the first sentence: the test's own error.
    assert first_sentence(got) == (
        "Test cell test_rows failed: NameError: name 'missing_river' is not defined."
    )


def test_a_chain_of_undefined_names_is_followed_to_the_cell_that_failed_first():
    """test_bank needs cosines (run_bank), which needs W_q (run_attention), which failed on the
    stub of lookup: the message names the stub's failure too."""
    document = {
        "cells": [
            markdown("## 3. Attention"),
            code("run_attention", "W_q, W_k, W_v = init_projections(d)", 3, STUB),
            markdown("## 4. Bank"),
            code("run_bank", "cosines = bank_comparison(vectors, W_q)", 4, NO_W_Q),
            code("test_bank", "assert cosines", 5, ("NameError", "name 'cosines' is not defined")),
        ]
    }  # fmt: skip
    assert message(document, "test_bank") == (
        "Test cell test_bank failed: NameError: name 'cosines' is not defined. An earlier cell, "
        '"cosines = bank_comparison(vectors, W_q)" in section 4, "Bank" (run_bank), which '
        "defines cosines, failed first; fix that one first: NameError: name 'W_q' is not "
        'defined. That cell needs W_q, which "W_q, W_k, W_v = init_projections(d)" in section 3, '
        '"Attention" (run_attention) defines and which failed first: NotImplementedError: '
        + NOT_DONE
    )


def test_an_error_unrelated_to_an_earlier_failure_names_none():
    document = {
        "cells": [
            code("vocab_report", "X_vocab = lookup(vectors, VOCAB)", 3, KEY_ERROR),
            code("test_rows", "assert A.sum() == 4, 'Rows...'", 4, ("AssertionError", ROWS)),
        ]
    }  # fmt: skip
    assert message(document, "test_rows") == (
        "Test cell test_rows failed: AssertionError: Rows must sum to 1."
    )


def test_a_numpy_assertion_reads_as_one_sentence_with_the_instructors_message_first():
    """The issue: numpy's report starts with a line break, so the summary and the class report
    showed an empty 'AssertionError:'."""
    evalue = (
        "\nNot equal to tolerance rtol=1e-07, atol=0\nThe heatmap should show A itself.\n"
        "Mismatched elements: 2 / 4 (50%)\nMax absolute difference among violations: 0.1\n"
        " ACTUAL: array([[0.7, 0.4],\n       [0.3, 0.6]])\n DESIRED: array([[0.7, 0.3],\n"
        "       [0.4, 0.6]])"
    )
    document = {"cells": [code("test_plots", "...", 1, ("AssertionError", evalue))]}
    got = message(document, "test_plots")
    assert got == (
        "Test cell test_plots failed: AssertionError: The heatmap should show A itself. (Not "
        "equal to tolerance rtol=1e-07, atol=0; Mismatched elements: 2 / 4 (50%); Max absolute "
        "difference among violations: 0.1)."
    )
    assert first_sentence(got) == (
        "Test cell test_plots failed: AssertionError: The heatmap should show A itself."
    )
    bare = {"cells": [code("test_plots", "assert x", 1, ("AssertionError", ""))]}
    assert message(bare, "test_plots") == (
        "Test cell test_plots failed: AssertionError, with no message."
    )


def test_the_cell_that_ended_the_kernel_is_named_in_the_tests_after_it():
    """The issue: a kernel that died zeroed everything without a word of where."""
    document = {
        "cells": [
            markdown("## 2. Look words up"),
            code(None, "hoard = []\nwhile True: hoard.append(1)", 3, ("MemoryError", "")),
            code("test_lookup", "assert lookup(...)", 4),
            code("run_attention", "X = lookup(vectors, RIVER)", 5, (KERNEL_DIED, "...")),
            code("test_rows", "...", None, (NOT_RUN, "...")),
        ]
    }  # fmt: skip
    why = KERNEL_WHY.format(memory_mb=4096)
    memory = EARLIER_MEMORY.format(cell='"hoard = []" in section 2, "Look words up"')
    assert message(document, "test_rows") == (
        NOT_RUN_AFTER.format(
            grade_id="test_rows",
            cell='"X = lookup(vectors, RIVER)" in section 2, "Look words up" (run_attention)',
            why=why,
        )
        + " "
        + memory
    )
    document["cells"][3]["metadata"]["nbgrader"]["grade_id"] = "test_lookup"
    document["cells"][2]["metadata"]["nbgrader"]["grade_id"] = "lookup"
    assert message(document, "test_lookup") == (
        CELL_ENDED_KERNEL.format(grade_id="test_lookup", why=why) + " " + memory
    )
    assert "4096 MB" in why


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
