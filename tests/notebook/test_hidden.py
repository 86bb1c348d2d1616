"""What the learner gets back never quotes the notebook's hidden tests (notebook/hidden.py).

Plain dictionaries stand in for notebooks: no nbgrader needed."""

from autograder.notebook.hidden import (
    HIDDEN_NOTE,
    SCRUBBED,
    hidden_lines,
    scrub,
    without_hidden_tests,
)

TEST_CELL = (
    "assert lookup(vectors, ['cat']).shape == (1, 50)\n"
    "### BEGIN HIDDEN TESTS\n"
    "X_h, missing_h = lookup(vectors, ['zzqxv', 'The'])\n"
    "assert missing_h == ['zzqxv'], 'Missing words in order.'\n"
    "pass\n"
    "### END HIDDEN TESTS\n"
)
HIDDEN_ASSERT = "assert missing_h == ['zzqxv'], 'Missing words in order.'"
# How IPython colours the quoted line of a traceback: codes inside the quote.
COLOURED = (
    "\x1b[0;32m----> 4\x1b[0m \x1b[38;5;28;01massert\x1b[39;00m missing_h \x1b[38;5;241m==\x1b"
    "[39m [\x1b[38;5;124m'zzqxv'\x1b[39m], \x1b[38;5;124m'Missing words in order.'\x1b[39m"
)


def _notebook(source, outputs: list) -> dict:
    return {"cells": [{"cell_type": "code", "source": source, "outputs": outputs}]}


def test_hidden_lines_are_the_long_enough_lines_between_the_markers():
    lines = hidden_lines(_notebook(TEST_CELL.splitlines(keepends=True), []))
    assert lines == {"X_h, missing_h = lookup(vectors, ['zzqxv', 'The'])", HIDDEN_ASSERT}
    # "pass" is too short to say anything; the visible assert is not hidden


def test_scrub_replaces_each_line_that_quotes_a_hidden_line_even_in_colour():
    hidden = hidden_lines(_notebook(TEST_CELL, []))
    traceback = f"Cell In[7], line 4\n{COLOURED}\nAssertionError: Missing words in order."
    assert scrub(traceback, hidden).split("\n") == [
        "Cell In[7], line 4",
        SCRUBBED,
        "AssertionError: Missing words in order.",  # the instructor's message stays
    ]
    assert scrub(f"before\n  {HIDDEN_ASSERT}  \nafter", hidden) == f"before\n{SCRUBBED}\nafter"
    assert scrub("nothing hidden here", hidden) == "nothing hidden here"
    assert scrub(HIDDEN_ASSERT, ()) == HIDDEN_ASSERT


def test_the_learners_copy_has_no_hidden_source_and_no_quoting_output():
    hidden = hidden_lines(_notebook(TEST_CELL, []))
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": ["ok\n", HIDDEN_ASSERT + "\n"]},
        {
            "output_type": "error",
            "ename": "AssertionError",
            "evalue": "Missing words in order.",
            "traceback": ["Cell In[7], line 4", COLOURED],
        },
        {"output_type": "execute_result", "data": {"text/plain": [HIDDEN_ASSERT]}},
    ]
    document = without_hidden_tests(_notebook(TEST_CELL, outputs), hidden)
    (cell,) = document["cells"]
    assert cell["source"].split("\n") == [
        "assert lookup(vectors, ['cat']).shape == (1, 50)",
        HIDDEN_NOTE,
    ]
    stream, error, result = cell["outputs"]
    assert stream["text"] == f"ok\n{SCRUBBED}\n"
    assert error["traceback"] == ["Cell In[7], line 4", SCRUBBED]
    assert error["evalue"] == "Missing words in order."
    assert result["data"]["text/plain"] == SCRUBBED


def test_every_textual_output_type_is_scrubbed_not_only_text():
    hidden = hidden_lines(_notebook(TEST_CELL, []))
    svg = f"<svg><text>{HIDDEN_ASSERT}</text></svg>"
    outputs = [
        {
            "output_type": "display_data",
            "data": {
                "image/svg+xml": [svg],
                "application/javascript": f"console.log(1)\n// {HIDDEN_ASSERT}",
                "image/png": "iVBORw0KGgo=",
                "application/json": {"cells": [HIDDEN_ASSERT, 3]},
            },
        }
    ]
    (cell,) = without_hidden_tests(_notebook(TEST_CELL, outputs), hidden)["cells"]
    data = cell["outputs"][0]["data"]
    assert data["image/svg+xml"] == SCRUBBED
    assert data["application/javascript"] == f"console.log(1)\n{SCRUBBED}"
    assert data["image/png"] == "iVBORw0KGgo="
    assert data["application/json"] == {"cells": [SCRUBBED, 3]}


def test_markers_are_found_anywhere_in_a_line_as_nbgrader_finds_them():
    """H43: "# BEGIN HIDDEN TESTS" (two hashes, or text after) is a marker to nbgrader, which
    hid those tests from the release; here it was not, and the graded copy showed them."""
    cell = TEST_CELL.replace("### BEGIN HIDDEN TESTS", "# BEGIN HIDDEN TESTS (lookup)").replace(
        "### END HIDDEN TESTS", "#END HIDDEN TESTS"
    )
    assert hidden_lines(_notebook(cell, [])) == hidden_lines(_notebook(TEST_CELL, []))
    shown = without_hidden_tests(_notebook(cell, []))["cells"][0]["source"]
    assert "zzqxv" not in shown and HIDDEN_NOTE in shown
