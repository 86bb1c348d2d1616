"""The class report: DIR/report.md, DIR/report.html and its figures, for an instructor to act on.

Built only from the per-learner folders (record.json and results.json), so a merged set of
shards reports exactly like one run. This module writes the files; report_model.py holds the
content's types and sentences, report_build.py builds it, report_markdown.py and report_html.py
render it, report_figures.py draws the figures.

Its sections: docs/instructor/grade-class.md#the-class-report.
Design: docs/internals/gradebook.md#the-class-report.
"""

from __future__ import annotations

from pathlib import Path

from autograder.atomic_files import atomic_write_bytes, atomic_write_text
from autograder.gradebook.report_build import (
    build_report,
    component_scores,
    missing_shards,
    submitted_components,
)
from autograder.gradebook.report_figures import component_figure, figure_library, score_figure
from autograder.gradebook.report_html import render_html
from autograder.gradebook.report_markdown import render_markdown
from autograder.gradebook.report_model import (
    COMPONENT_FIGURE_FILE,
    DEADLINE_NOTE,
    FIGURE_FILE,
    GRADED_WHEN,
    HTML_FILE,
    LATE_NOTE,
    MARKDOWN_FILE,
    MISSING_SHARDS,
    NO_LEARNER,
    NO_MATPLOTLIB,
    NOT_GRADED,
    NOT_GRADED_YET,
    NOT_SUBMITTED,
    NOTHING_SUBMITTED,
    SHARD_NOTE,
    SHOWING,
    STALE_COPIES,
    TOP_FAILURES,
    UNFINISHED_SHARDS,
    ClassReport,
    Component,
    FailureRow,
    LearnerRow,
    who_text,
)
from autograder.gradebook.report_tests import as_sentence, failure_key, normalise
from autograder.gradebook.store import LearnerRecord

__all__ = [
    "COMPONENT_FIGURE_FILE",
    "DEADLINE_NOTE",
    "FIGURE_FILE",
    "GRADED_WHEN",
    "HTML_FILE",
    "LATE_NOTE",
    "MARKDOWN_FILE",
    "MISSING_SHARDS",
    "NOTHING_SUBMITTED",
    "NOT_GRADED",
    "NOT_GRADED_YET",
    "NOT_SUBMITTED",
    "NO_LEARNER",
    "NO_MATPLOTLIB",
    "SHARD_NOTE",
    "SHOWING",
    "STALE_COPIES",
    "TOP_FAILURES",
    "UNFINISHED_SHARDS",
    "ClassReport",
    "Component",
    "FailureRow",
    "LearnerRow",
    "as_sentence",
    "build_report",
    "component_scores",
    "failure_key",
    "figure_library",
    "missing_shards",
    "normalise",
    "render_html",
    "render_markdown",
    "submitted_components",
    "who_text",
    "write_report",
]


def write_report(
    out: Path,
    records: list[LearnerRecord],
    components: list[Component],
    course: str,
    note: str = "",
) -> ClassReport:
    """Write report.md, report.html and the figures into out; return what they show
    (``note``: a sentence said before all others, such as grade-class's INTERRUPTED_NOTE)."""
    report = build_report(out, records, components, course, note)
    if report.totals:
        report.figure = score_figure(report.totals, report.max_score)
        report.component_figure = component_figure(report.scores)
    for data, name in (
        (report.figure, FIGURE_FILE),
        (report.component_figure, COMPONENT_FIGURE_FILE),
    ):
        if data:
            atomic_write_bytes(Path(out) / name, data)
        else:  # not a figure of an earlier run beside this report
            (Path(out) / name).unlink(missing_ok=True)
    if report.totals and not report.figure:
        report.notes.append(NO_MATPLOTLIB)
    atomic_write_text(Path(out) / MARKDOWN_FILE, render_markdown(report))
    atomic_write_text(Path(out) / HTML_FILE, render_html(report))
    return report
