"""The two grading rules added to nbgrader's pipeline (autograder/notebook/preprocessors.py),
checked on notebook cells against nbgrader's own scoring function."""

import pytest

pytest.importorskip("nbgrader", reason="needs the notebook extra: pip install -e '.[notebook]'")

from nbformat.v4 import new_code_cell, new_notebook, new_output  # noqa: E402
from nbgrader.utils import determine_grade  # noqa: E402

from autograder.notebook.preprocessors import (  # noqa: E402
    RESTORED,
    STDERR_PREFIX,
    DropDuplicateIds,
    StderrIsNotFailure,
    reorder,
    restored_cell,
    stderr_as_stdout,
)


def grade_cell(grade_id, outputs=(), points=2.0):
    meta = {
        "grade": True,
        "grade_id": grade_id,
        "locked": True,
        "points": points,
        "solution": False,
        "schema_version": 3,
    }
    cell = new_code_cell("assert True", metadata={"nbgrader": meta})
    cell.outputs = list(outputs)
    return cell


def labelled(grade_id, text=""):
    return new_code_cell(text or grade_id, metadata={"nbgrader": {"grade_id": grade_id}})


def ids(cells):
    return [c.metadata.get("nbgrader", {}).get("grade_id", c.source) for c in cells]


def test_nbgrader_alone_fails_a_cell_that_wrote_to_stderr():
    cell = grade_cell("t", [new_output("stream", name="stderr", text="UserWarning: careful\n")])
    assert determine_grade(cell) == (0, 2.0)


def test_after_the_rule_a_warning_keeps_full_points_and_stays_readable():
    warning = new_output("stream", name="stderr", text="UserWarning: careful\nsecond line\n")
    cell = grade_cell("t", [warning])
    cell, _ = StderrIsNotFailure().preprocess_cell(cell, {}, 0)
    assert determine_grade(cell) == (2.0, 2.0)
    (output,) = cell.outputs
    assert output.name == "stdout"
    assert output.text == f"{STDERR_PREFIX}UserWarning: careful\n{STDERR_PREFIX}second line\n"


def test_after_the_rule_an_error_still_fails():
    error = new_output("error", ename="AssertionError", evalue="rows must sum to 1", traceback=[])
    warning = new_output("stream", name="stderr", text="careful")
    cell, _ = StderrIsNotFailure().preprocess_cell(grade_cell("t", [warning, error]), {}, 0)
    assert determine_grade(cell) == (0, 2.0)


def test_stderr_lines_are_prefixed_without_inventing_a_final_newline():
    assert stderr_as_stdout("a\nb") == f"{STDERR_PREFIX}a\n{STDERR_PREFIX}b"
    assert stderr_as_stdout("a\n") == f"{STDERR_PREFIX}a\n"


def test_a_moved_test_cell_goes_back_after_the_code_it_tests():
    order = ["setup", "solve", "test_solve", "plots", "test_plots"]
    cells = [
        labelled("test_plots"),
        labelled("setup"),
        labelled("solve"),
        labelled("test_solve"),
        labelled("plots"),
    ]
    assert ids(reorder(cells, order, {})) == order


def test_own_cells_travel_with_the_cell_they_followed():
    order = ["setup", "solve", "test_solve"]
    cells = [
        new_code_cell("first scratch"),
        labelled("setup"),
        labelled("test_solve"),
        labelled("solve"),
        new_code_cell("my helper"),
    ]
    assert ids(reorder(cells, order, {})) == [
        "first scratch",
        "setup",
        "solve",
        "my helper",
        "test_solve",
    ]


def test_deleted_cells_come_back_from_the_course_and_unknown_labels_stay_at_the_end():
    order = ["setup", "solve", "test_solve"]
    missing = {"test_solve": grade_cell("test_solve")}
    missing["test_solve"].source = "restored test"
    cells = [labelled("setup"), labelled("solve"), labelled("mine"), labelled("solve", "copy")]
    result = reorder(cells, order, missing)
    assert [c.source for c in result] == ["setup", "solve", "copy", "restored test", "mine"]


def test_a_restored_test_cell_is_a_locked_grade_cell_with_its_points_and_a_note():
    cell = restored_cell(
        "test_solve",
        "code",
        "assert x == 1",
        locked=True,
        checksum="abc",
        points=3.0,
        solution=False,
    )
    meta = cell.metadata.nbgrader
    assert (meta.grade, meta.locked, meta.points, meta.checksum) == (True, True, 3.0, "abc")
    assert cell.source == f"# {RESTORED}\nassert x == 1"
    text = restored_cell(
        "intro", "markdown", "Read me", locked=True, checksum=None, points=None, solution=False
    )
    assert text.cell_type == "markdown" and not text.metadata.nbgrader.grade
    assert text.source.endswith("Read me")


def test_a_restored_read_only_cell_runs_before_the_own_cells_that_follow_it():
    """H43: the deleted read-only `loaders` came back after the learner's cell that called
    load_vectors (which had followed it, and then followed `loaders_intro`): NameError, 6/20."""
    order = ["loaders_intro", "loaders", "test_rows"]
    missing = {"loaders": labelled("loaders", "def load_vectors(): ...")}
    missing["test_rows"] = grade_cell("test_rows")
    cells = [labelled("loaders_intro"), new_code_cell("vectors = load_vectors()")]
    assert ids(reorder(cells, order, missing)) == [
        "loaders_intro",
        "loaders",
        "vectors = load_vectors()",
        "test_rows",
    ]


def test_after_an_answer_a_restored_read_only_cell_runs_after_the_learners_cells():
    """H45: a helper the learner moved out of the answer cell must run before the restored
    read-only cell that calls it."""
    order = ["attention", "run_attention", "test_shapes"]
    answer = new_code_cell(
        "def attention(): ...", metadata={"nbgrader": {"grade_id": "attention", "solution": True}}
    )
    missing = {"run_attention": labelled("run_attention", "out = attention()")}
    missing["test_shapes"] = grade_cell("test_shapes")
    cells = [answer, new_code_cell("def softmax(): ...")]
    assert ids(reorder(cells, order, missing)) == [
        "attention",
        "def softmax(): ...",
        "run_attention",
        "test_shapes",
    ]


def test_the_first_cell_of_a_grade_id_keeps_it_later_copies_become_plain_cells():
    """H43: nbgrader 0.9's DeduplicateIds left {} (refused later: no grade at all); H45: it kept
    the last copy, so an old attempt pasted at the end took the answer's place."""
    cells = [labelled("lookup", "answer"), labelled("test_lookup"), labelled("lookup", "old try")]
    notebook = new_notebook(cells=cells)
    DropDuplicateIds().preprocess(notebook, {})
    assert ids(notebook.cells) == ["lookup", "test_lookup", "old try"]
    assert "nbgrader" not in notebook.cells[2].metadata
