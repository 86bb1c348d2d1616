"""The class report lists each learner's total (H40 found it only in gradebook.csv), and whether
they committed after the deadline when there is one."""

from autograder.gradebook.report import Component, build_report, render_html, render_markdown
from autograder.gradebook.store import LearnerRecord
from tests.batch.test_report_empty_sections import _sections

PARTS = [Component("a", "Part A", 10.0), Component("b", "Part B", 5.0)]


def _records(late: bool | None) -> list[LearnerRecord]:
    return [
        LearnerRecord("sam", components={"a": 4.0, "b": 5.0}, total=9.0, max_score=15.0, late=late),
        LearnerRecord("kim", components={"a": 10.0, "b": 5.0}, total=15.0, max_score=15.0),
        LearnerRecord("lee", error="The repository is missing."),
    ]


def test_each_learner_total_in_gradebook_order(tmp_path):
    report = build_report(tmp_path, _records(late=None), PARTS, "Course")
    markdown = render_markdown(report)
    assert (
        "| Learner | Total |\n|---|---:|\n"
        "| `kim` | 15.00 / 15.00 |\n| `lee` | error (see the errored learners) |\n"
        "| `sam` | 9.00 / 15.00 |\n"
    ) in markdown
    learners = _sections(render_html(report))["Learners"]
    assert "<tr><th>Learner</th><th>Total</th></tr>" in learners
    assert "<tr><td>lee</td><td>error (see the errored learners)</td></tr>" in learners


def test_the_deadline_column_shows_only_with_a_deadline(tmp_path):
    report = build_report(tmp_path, _records(late=True), PARTS, "Course")
    markdown = render_markdown(report)
    assert "| Learner | Total | Commits after the deadline |\n|---|---:|---|\n" in markdown
    assert (
        "| `sam` | 9.00 / 15.00 | yes |" in markdown and "| `kim` | 15.00 / 15.00 |  |" in markdown
    )


def test_one_deadline_written_in_two_ways_is_named_once(tmp_path):
    """Shards merged from --deadline ...T23:59:00+05:30 and ...T18:29:00Z (merge accepts them)."""
    records = [
        LearnerRecord("kim", total=1.0, max_score=15.0, deadline="2026-08-15T23:59:00+05:30"),
        LearnerRecord("sam", total=1.0, max_score=15.0, deadline="2026-08-15T18:29:00Z"),
    ]
    notes = build_report(tmp_path, records, PARTS, "Course").notes
    assert notes[0].startswith("Graded at the deadline 2026-08-15T18:29:00Z: each learner's")
