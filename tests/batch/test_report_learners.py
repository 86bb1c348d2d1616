"""The class report lists each learner's total (H40 found it only in gradebook.csv), and whether
they committed after the deadline when there is one."""

import json

from autograder.gradebook.report import Component, build_report, render_html, render_markdown
from autograder.gradebook.store import RECORD_FILE, LearnerRecord
from tests.batch.test_report_empty_sections import _sections

PARTS = [Component("a", "Part A", 10.0), Component("b", "Part B", 5.0)]


def write_record(out, record: LearnerRecord) -> None:
    (out / record.learner).mkdir()
    (out / record.learner / RECORD_FILE).write_text(record.to_json())


def _records(late: bool | None) -> list[LearnerRecord]:
    return [
        LearnerRecord("sam", components={"a": 4.0, "b": 5.0}, total=9.0, max_score=15.0, late=late),
        LearnerRecord("kim", components={"a": 10.0, "b": 5.0}, total=15.0, max_score=15.0),
        LearnerRecord("lee", error="The repository is missing."),
    ]


def test_each_learner_score_per_component_and_total_in_gradebook_order(tmp_path):
    report = build_report(tmp_path, _records(late=None), PARTS, "Course")
    markdown = render_markdown(report)
    assert (
        "| Learner | Part A (/10) | Part B (/5) | Total |\n|---|---:|---:|---:|\n"
        "| `kim` | 10.00 | 5.00 | 15.00 / 15.00 |\n"
        "| `lee` |  |  | error (see the errored learners) |\n"
        "| `sam` | 4.00 | 5.00 | 9.00 / 15.00 |\n"
    ) in markdown
    learners = _sections(render_html(report))["Learners"]
    assert (
        '<thead><tr><th>Learner</th><th class="n">Part A (/10)</th><th class="n">Part B (/5)</th>'
        '<th class="n">Total</th></tr></thead>'
    ) in learners
    assert (
        '<tr><td>lee</td><td></td><td></td><td class="n" data-sort="">error (see the errored '
        "learners)</td></tr>"
    ) in learners
    assert '<table class="sortable" id="learners">' in learners


def test_a_learner_with_a_folder_links_to_their_summary(tmp_path):
    records = _records(late=None)
    write_record(tmp_path, records[0])  # sam
    report = build_report(tmp_path, records, PARTS, "Course")
    assert "| [`sam`](sam/summary.md) | 4.00 | 5.00 | 9.00 / 15.00 |" in render_markdown(report)
    learners = _sections(render_html(report))["Learners"]
    assert '<td data-sort="sam"><a href="sam/summary.md">sam</a></td>' in learners
    assert "<td>kim</td>" in learners  # no folder: no link


def test_the_deadline_column_shows_only_with_a_deadline(tmp_path):
    report = build_report(tmp_path, _records(late=True), PARTS, "Course")
    markdown = render_markdown(report)
    assert (
        "| Learner | Part A (/10) | Part B (/5) | Total | Commits after the deadline |\n"
        "|---|---:|---:|---:|---|\n"
    ) in markdown
    assert "| `sam` | 4.00 | 5.00 | 9.00 / 15.00 | yes |" in markdown
    assert "| `kim` | 10.00 | 5.00 | 15.00 / 15.00 |  |" in markdown


def test_the_late_columns_and_note_show_with_the_late_policy(tmp_path):
    late = LearnerRecord(
        "sam", components={"a": 10.0, "b": 5.0}, total=13.5, max_score=15.0, late=False,
        deadline="2026-08-15T23:59:00+05:30", extension_days=0, late_days=1, late_penalty=1.5,
        raw_total=15.0,
    )  # fmt: skip
    extended = LearnerRecord(
        "kim", components={"a": 10.0, "b": 5.0}, total=15.0, max_score=15.0, late=False,
        deadline="2026-08-15T23:59:00+05:30", extension_days=2, late_days=0, late_penalty=0.0,
        raw_total=15.0,
    )  # fmt: skip
    for record in (late, extended):
        write_record(tmp_path, record)
        results = {
            "extra_data": {"graded_commit": {"late": {"penalty_per_day": 10, "max_days": 3}}}
        }
        (tmp_path / record.learner / "results.json").write_text(json.dumps(results))
    report = build_report(tmp_path, [late, extended], PARTS, "Course")
    markdown = render_markdown(report)
    assert (
        "Late policy: each learner's last commit up to 3 days after their own deadline (the "
        "deadline plus their roster's extension_days) is graded and loses 10% of the total "
        "points per day started after it. Late: 1 learner, 1.50 points taken in all; with an "
        "extension: kim."
    ) in markdown
    assert (
        "| Learner | Part A (/10) | Part B (/5) | Total | Commits after the window | "
        "Extension (days) | Days late | Late penalty |"
    ) in markdown
    assert (
        "| [`sam`](sam/summary.md) | 10.00 | 5.00 | 13.50 / 15.00 | no | 0 | 1 | 1.50 |" in markdown
    )
    assert (
        "| [`kim`](kim/summary.md) | 10.00 | 5.00 | 15.00 / 15.00 | no | 2 | 0 | 0.00 |" in markdown
    )


def test_one_deadline_written_in_two_ways_is_named_once(tmp_path):
    """Shards merged from --deadline ...T23:59:00+05:30 and ...T18:29:00Z (merge accepts them)."""
    records = [
        LearnerRecord("kim", total=1.0, max_score=15.0, deadline="2026-08-15T23:59:00+05:30"),
        LearnerRecord("sam", total=1.0, max_score=15.0, deadline="2026-08-15T18:29:00Z"),
    ]
    notes = build_report(tmp_path, records, PARTS, "Course").notes
    assert notes[0].startswith("Graded at the deadline 2026-08-15T18:29:00Z: each learner's")
