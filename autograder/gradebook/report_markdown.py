"""The class report as Markdown (DIR/report.md).

Learner text is escaped for Markdown tables (learner_text.py); learner ids are code spans,
and each links to the learner's summary.md."""

from __future__ import annotations

import re
import statistics

from autograder.gradebook.report_model import (
    COMPONENT_FIGURE_FILE,
    FIGURE_FILE,
    LEARNERS_LINE,
    NO_FIGURE,
    NO_LEARNER,
    NONE,
    NOT_GRADED,
    PASS_RATE_LINE,
    REVIEW_HEADING,
    TAMPER_NOT_CHECKED,
    TAMPER_VISIBLE_ONLY,
    ClassReport,
    LearnerRow,
    split_test_name,
)
from autograder.learner_text import clean, markdown_inline
from autograder.points_text import points


def summary_lines(report: ClassReport) -> list[str]:
    """The report's first lines: how many graded, the total's mean and median, the notes."""
    lines = [f"{report.graded} of {report.learners} learners graded."]
    if report.totals:
        lines.append(
            f"Total: mean {points(statistics.fmean(report.totals))}, median "
            f"{points(statistics.median(report.totals))}, out of {points(report.max_score)}."
        )
    lines += report.notes
    return lines + ([report.similarity_note] if report.similarity_note else [])


def mean_text(mean: float, out_of: float, count: int) -> str:
    """A mean out of the points, or NO_LEARNER when no learner was graded for it."""
    return f"{points(mean)} / {points(out_of)}" if count else NO_LEARNER


def figure_text(report: ClassReport) -> str:
    """What stands for a missing figure."""
    return "(no figure)" if report.totals else NO_FIGURE


def learner_header(report: ClassReport) -> list[str]:
    """The Learners table's headings: learner, a column per component, the total, then the
    deadline's, late policy's and similarity columns when they apply."""
    header = ["Learner", *[f"{t} (/{p:g})" for t, p in report.columns], "Total"]
    later = "Commits after the window" if report.with_late else "Commits after the deadline"
    header += [later] if report.with_deadline else []
    header += ["Extension (days)", "Days late", "Late penalty"] if report.with_late else []
    return header + (["Most similar (whole package)"] if report.with_similarity else [])


def learner_cells(report: ClassReport, row: LearnerRow) -> list[str]:
    """A row's cells after the learner, as learner_header orders them."""
    cells = [*row.scores, row.total or NOT_GRADED]
    cells += [row.late] if report.with_deadline else []
    cells += [row.extension, row.days_late, row.penalty] if report.with_late else []
    return cells + ([row.similarity] if report.with_similarity else [])


def _cell(text: str) -> str:
    """Text in a table cell, escaped only where Markdown would misread it (learner_text.py)."""
    return markdown_inline(text)


def test_cell(name: str) -> str:
    """A test's name in a table cell: its description escaped, its parametrized id (if any) a
    code span whatever characters it holds (`[near_-1000]` and `[axis=0]` alike)."""
    description, test_id = split_test_name(name)
    if not test_id:
        return _cell(name)
    test_id = clean(test_id).replace("\n", " ")
    fence = "`" * (max(map(len, re.findall("`+", test_id)), default=0) + 1)
    pad = " " if test_id.startswith("`") or test_id.endswith("`") else ""
    shown = f"{fence}{pad}{test_id}{pad}{fence}".replace("|", "\\|")
    return f"{_cell(description)} [{shown}]"


def _text(text: str) -> str:
    """Text in a heading or a list item: the same, and a pipe is plain text there."""
    return markdown_inline(text, table=False)


def _code(text: str) -> str:
    """A learner id as a code span (shown as written; a backtick cannot close it)."""
    return clean(text).replace("\n", " ").replace("`", "'")


def _learner_link(row: LearnerRow) -> str:
    """The learner's id, linking to their summary.md when their folder has one."""
    shown = f"`{_code(row.learner)}`"
    return f"[{shown}]({row.learner}/summary.md)" if row.linked else shown


def _table(header: list[str], alignments: str, rows: list[list[str]]) -> list[str]:
    return [f"| {' | '.join(header)} |", f"|{alignments}|", *(f"| {' | '.join(r)} |" for r in rows)]


def _failure_sections(report: ClassReport) -> list[str]:
    out = ["## Known mistakes", ""]
    if report.mistakes:
        header = ["Learners", "Component", "Known mistake", "Explanation", "Who"]
        rows = [
            [str(r.learners), _cell(r.component), _cell(r.mistake), _cell(r.message),
             _cell(r.who_text)]
            for r in report.mistakes
        ]  # fmt: skip
        out += _table(header, "---:|---|---|---|---", rows)
    else:
        out.append(NONE)
    out += ["", "## Most common failure messages", ""]
    if report.failures:
        rows = [
            [str(r.learners), _cell(r.component), _cell(r.message), _cell(r.who_text)]
            for r in report.failures
        ]
        out += _table(["Learners", "Component", "Message", "Who"], "---:|---|---|---", rows)
        out += ["", report.showing] if report.showing else []
    else:
        out.append(NONE)
    out += ["", "## Not implemented yet", ""]
    out += [f"- {_text(line)}" for line in report.not_implemented_lines()] or [NONE]
    return out


def _learner_lists(report: ClassReport) -> list[str]:
    out = ["## Learners whose grading errored", ""]
    out += [f"- `{_code(who)}`: {_text(error)}" for who, error in report.errored] or [NONE]
    for title, entries in (
        ("Learners with nothing to grade", report.nothing_submitted),
        ("Learners not graded yet", report.not_graded_yet),
    ):
        if entries:
            out += ["", f"## {title}", ""]
            out += [f"- `{_code(who)}`: {_text(why)}" for who, why in entries]
    out += ["", "## Tamper flags (files of the release a learner changed; graded with yours)", ""]
    unchecked = _text(TAMPER_NOT_CHECKED) if not report.tamper_checked else NONE
    out += [f"- `{_code(who)}`: {_text(files)}" for who, files in report.tampered] or [unchecked]
    if report.tampered and not report.tamper_checked:
        out += ["", _text(TAMPER_VISIBLE_ONLY)]
    if report.review:
        out += ["", f"## {REVIEW_HEADING}", ""]
        out += [f"- `{_code(who)}`: {_text(flags)}" for who, flags in report.review]
    return out


def _learners_section(report: ClassReport) -> list[str]:
    out = ["## Learners", ""]
    if not report.rows:
        return out + [NONE]
    header = learner_header(report)
    rows = [
        [_learner_link(row), *(_cell(cell) for cell in learner_cells(report, row))]
        for row in report.rows
    ]
    numbers = len(report.columns) + 1  # the scores and the total, right-aligned
    alignments = ["---", *["---:"] * numbers, *["---"] * (len(header) - 1 - numbers)]
    return (
        out + [LEARNERS_LINE, ""] + _table([_cell(h) for h in header], "|".join(alignments), rows)
    )


def render_markdown(report: ClassReport) -> str:
    out = [f"# {_text(report.course)}: class report", "", *summary_lines(report), ""]
    out += ["## Score distribution", ""]
    out += [f"![Score distribution]({FIGURE_FILE})" if report.figure else figure_text(report), ""]
    out += ["## Score per component", ""]
    rows = [
        [_cell(title), mean_text(mean, out_of, count), f"{full} / {count}"]
        for title, mean, out_of, full, count in report.components
    ]
    out += _table(["Component", "Mean", "Full marks"], "---|---:|---:", rows)
    if report.component_figure:
        out += ["", f"![Score distribution per component]({COMPONENT_FIGURE_FILE})"]
    out += ["", *_learners_section(report), ""]
    out += [*_failure_sections(report), "", *_learner_lists(report)]
    # Last: one row per test some learner failed, the longest section.
    out += ["", "## Pass rate per test (most failed first)", ""]
    if report.tests:
        rows = [[test_cell(name), f"{p} / {n}"] for name, p, n in report.tests_failed]
        out += [PASS_RATE_LINE, ""]
        out += [*_table(["Test", "Passed"], "---|---:", rows), ""] if rows else []
        out += [report.tests_all_passed] if report.tests_all_passed else []
    else:
        out.append(NONE)
    return "\n".join(out) + "\n"
