"""The class report's components and order, from gradebook rows alone (no grading)."""

from autograder.gradebook.report import Component, build_report
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
