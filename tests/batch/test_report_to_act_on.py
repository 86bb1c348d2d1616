"""The class report's parts an instructor acts on: each test's pass rate among the learners who
implemented its component, a score histogram per component, and the static check's flags for
review beside the tamper flags."""

import html
import io
import json

import pytest

from autograder.gradebook.report import (
    COMPONENT_FIGURE_FILE,
    Component,
    build_report,
    render_html,
    render_markdown,
    write_report,
)
from autograder.gradebook.report_model import PASS_RATE_LINE, REVIEW_HEADING
from autograder.gradebook.store import RECORD_FILE, LearnerRecord
from tests.batch.test_report_empty_sections import _sections

PARTS = [Component("a", "Part A", 10.0), Component("b", "Part B", 5.0)]
STUB = "attention is not implemented yet."


def _learner(out, learner: str, tests: list[tuple[str, str, str]], **fields) -> LearnerRecord:
    """A learner folder whose results.json holds the tests (name, component, output; an empty
    output passed)."""
    (out / learner).mkdir()
    document = {
        "tests": [
            {"name": n, "status": "failed" if o else "passed", "output": o, "tags": [c]}
            for n, c, o in tests
        ]
    }
    (out / learner / "results.json").write_text(json.dumps(document))
    record = LearnerRecord(learner, **fields)
    (out / learner / RECORD_FILE).write_text(record.to_json())
    return record


def test_a_tests_pass_rate_counts_only_the_learners_who_implemented_its_component(tmp_path):
    sam = _learner(
        tmp_path, "sam", [("a1", "a", STUB), ("a2", "a", STUB), ("b1", "b", "")],
        components={"a": 0.0, "b": 5.0}, total=5.0, max_score=15.0,
    )  # fmt: skip
    kim = _learner(
        tmp_path, "kim", [("a1", "a", ""), ("a2", "a", "Wrong value."), ("b1", "b", "Wrong.")],
        components={"a": 5.0, "b": 0.0}, total=5.0, max_score=15.0,
    )  # fmt: skip
    report = build_report(tmp_path, [sam, kim], PARTS, "Course")
    # sam's stubbed Part A is left out of a1 and a2; both learners ran b1. Most failed first.
    assert report.tests == [("a2", 0, 1), ("b1", 1, 2), ("a1", 1, 1)]
    assert report.not_implemented == [("Part A", ("sam",))]


def test_every_component_leaves_out_a_learner_whose_every_test_failed_on_a_stub(tmp_path):
    """The encoder's hidden tests wrap the stub's sentence ("EncoderLayer(12, 3, 20) could not
    be constructed, ... EncoderLayer(...) is not implemented yet: ..."): its stub learners were
    counted in its pass rates, and their messages listed as common failures, while multi-head
    attention's were left out."""
    stub = (
        "A(...) is not implemented yet: it raised NotImplementedError at assignments/t101/a.py. "
        "Replace the `raise NotImplementedError` with your implementation."
    )
    wrapped = f"A(12, 3) could not be constructed, so its wiring cannot be graded. {stub}"
    sam = _learner(
        tmp_path, "sam", [("a1", "a", stub), ("a2", "a", wrapped), ("b1", "b", STUB)],
        components={"a": 0.0, "b": 0.0}, total=0.0, max_score=15.0,
    )  # fmt: skip
    kim = _learner(
        tmp_path, "kim", [("a1", "a", ""), ("a2", "a", "Wrong value."), ("b1", "b", "")],
        components={"a": 5.0, "b": 5.0}, total=10.0, max_score=15.0,
    )  # fmt: skip
    report = build_report(tmp_path, [sam, kim], PARTS, "Course")
    assert report.tests == [("a2", 0, 1), ("a1", 1, 1), ("b1", 1, 1)]
    assert report.not_implemented == [("Part A", ("sam",)), ("Part B", ("sam",))]
    assert [(row.message, row.who) for row in report.failures] == [("Wrong value.", ("kim",))]
    text = render_markdown(report)
    assert "could not be constructed" not in text
    assert PASS_RATE_LINE in text and html.escape(PASS_RATE_LINE) in render_html(report)


def test_each_component_has_its_histogram_in_one_figure_the_report_shows(tmp_path):
    pytest.importorskip("matplotlib", reason="the figures need the report extra")
    from PIL import Image

    records = [
        LearnerRecord("sam", components={"a": 4.0, "b": 5.0}, total=9.0, max_score=15.0),
        LearnerRecord("kim", components={"a": 10.0, "b": 5.0}, total=15.0, max_score=15.0),
        LearnerRecord("lee", error="The repository is missing."),
    ]
    report = write_report(tmp_path, records, PARTS, "Course")
    assert report.scores == [("Part A", 10.0, [4.0, 10.0]), ("Part B", 5.0, [5.0, 5.0])]
    png = (tmp_path / COMPONENT_FIGURE_FILE).read_bytes()
    assert png == report.component_figure
    assert Image.open(io.BytesIO(png)).size == (680, 260)  # two panels of 340 x 260 side by side
    assert f"![Score distribution per component]({COMPONENT_FIGURE_FILE})" in (
        tmp_path / "report.md"
    ).read_text(encoding="utf-8")
    assert 'alt="Score distribution per component"' in render_html(report)


def test_the_static_checks_flags_for_review_have_their_own_section(tmp_path):
    flag = "assignments/t101/attention.py line 3: getattr(torch, name) reaches torch by a name"
    records = [
        LearnerRecord("sam", total=9.0, max_score=15.0, review=[flag]),
        LearnerRecord("kim", total=15.0, max_score=15.0),
    ]
    report = build_report(tmp_path, records, PARTS, "Course")
    assert report.review == [("sam", flag)]
    assert f"## {REVIEW_HEADING}\n\n- `sam`: {flag}" in render_markdown(report)
    section = _sections(render_html(report))[REVIEW_HEADING]
    assert "<td>sam</td>" in section and "getattr(torch, name)" in section
    quiet = build_report(tmp_path, records[1:], PARTS, "Course")
    assert REVIEW_HEADING not in render_markdown(quiet)
