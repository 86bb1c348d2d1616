"""A test cell the learner deleted or moved is put back by the grader, and the grade says so
(autograder/notebook/restored.py; the issue: restored without a word). Notebooks as JSON only."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.notebook.course import only_assignment
from autograder.notebook.restored import MISSING, MOVED, restored_notes
from tests.notebook.conftest import EXAMPLES, LEARNER_PATH, ROOT


def grade_id(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def edited(folder: Path, change) -> Path:
    document = json.loads((EXAMPLES / "correct" / LEARNER_PATH).read_text(encoding="utf-8"))
    document["cells"] = change(document["cells"])
    path = folder / "edited.ipynb"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_the_broken_example_is_told_of_its_deleted_and_its_moved_test_cell():
    notes = restored_notes(only_assignment(ROOT), EXAMPLES / "broken" / LEARNER_PATH)
    assert notes == [
        MISSING.format(cells="test cell test_lookup", each=""),
        MOVED.format(
            cells="test cell test_bank", were="was", them="it", their="its", they="it", need="needs"
        ),
    ]
    assert notes[1] == (
        "In your notebook, the test cell test_bank was not where the course put it; the grader "
        "ran it in its place, after the code it needs."
    )


def test_a_notebook_as_released_has_nothing_to_say():
    for name in ("correct", "untouched", "hanging"):
        assert restored_notes(only_assignment(ROOT), EXAMPLES / name / LEARNER_PATH) == []


def test_several_cells_are_named_in_one_sentence_each_kind_together(tmp_path):
    drop = {"test_rows", "test_shapes", "run_bank"}
    path = edited(tmp_path, lambda cells: [c for c in cells if grade_id(c) not in drop])
    (note,) = restored_notes(only_assignment(ROOT), path)
    assert note == (  # in the course's order, each kind once
        "Your notebook had no test cells test_shapes and test_rows, read-only cell run_bank; "
        "the grader put back the course's version of each, where it belongs, and ran it."
    )


def test_a_copy_of_a_cell_is_no_move_and_a_deleted_heading_is_not_named(tmp_path):
    def change(cells):
        lookup = next(c for c in cells if grade_id(c) == "lookup")
        cells = [c for c in cells if grade_id(c) != "plots_intro"]
        return [*cells, lookup]  # Jupyter's copy, pasted at the end: a plain cell when graded

    assert restored_notes(only_assignment(ROOT), edited(tmp_path, change)) == []


def test_an_unreadable_notebook_has_no_notes(tmp_path):
    path = tmp_path / "garbage.ipynb"
    path.write_text("print('not a notebook')")
    assert restored_notes(only_assignment(ROOT), path) == []
