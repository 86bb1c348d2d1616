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
from autograder.gradebook.report_build import build_report
from autograder.gradebook.report_figures import component_figure, score_figure
from autograder.gradebook.report_html import render_html
from autograder.gradebook.report_markdown import render_markdown
from autograder.gradebook.report_model import (
    COMPONENT_FIGURE_FILE,
    FIGURE_FILE,
    HTML_FILE,
    MARKDOWN_FILE,
    NO_MATPLOTLIB,
    ClassReport,
    Component,
)
from autograder.gradebook.store import LearnerRecord

#: What the report is made of, with its files; every other name is imported from its own
#: module (report_model, report_build, report_tests, report_figures).
__all__ = [
    "COMPONENT_FIGURE_FILE",
    "FIGURE_FILE",
    "HTML_FILE",
    "MARKDOWN_FILE",
    "ClassReport",
    "Component",
    "build_report",
    "render_html",
    "render_markdown",
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
