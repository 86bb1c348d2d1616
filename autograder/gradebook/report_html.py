"""The class report as one self-contained HTML page.

The class report as one self-contained HTML page (DIR/report.html): the figures embedded,
the Learners table sortable by a small inline script (no file from elsewhere: the page works
offline and from a CI artifact), each learner linking to their summary.md. Every text is
escaped for HTML."""

from __future__ import annotations

import base64
import html
import re

from autograder.gradebook.report_markdown import (
    figure_text,
    learner_cells,
    learner_header,
    mean_text,
    summary_lines,
)
from autograder.gradebook.report_model import (
    LEARNERS_LINE,
    LEARNERS_SORT,
    NONE,
    PASS_RATE_LINE,
    REVIEW_HEADING,
    TAMPER_NOT_CHECKED,
    TAMPER_VISIBLE_ONLY,
    ClassReport,
    LearnerRow,
    split_test_name,
)
from autograder.learner_text import clean

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:72rem;
margin:1.5rem auto;padding:0 1rem;color:#1f2328;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
td,th{border:1px solid #d0d7de;padding:.25rem .55rem;vertical-align:top}
th{background:#f6f8fa;text-align:left}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tbody tr:nth-child(even){background:#fafbfc}
table.sortable th{cursor:pointer;user-select:none;max-width:9rem;vertical-align:bottom}
td.n{white-space:nowrap}div.wide{overflow-x:auto}
table.sortable th::after{content:" \\2195";color:#8c959f}
table.sortable th[aria-sort=ascending]::after{content:" \\2191";color:#1f2328}
table.sortable th[aria-sort=descending]::after{content:" \\2193";color:#1f2328}
tr.flagged td{background:#fff1e5}img{max-width:100%}
"""

#: Sorts a table.sortable by the column whose heading is clicked: numbers as numbers (a
#: cell's data-sort, else its leading number), other text alphabetically; empty cells last.
SORT_SCRIPT = """
document.addEventListener("DOMContentLoaded", function () {
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[column], text = cell.getAttribute("data-sort") || cell.textContent;
        var number = parseFloat(text);
        return isNaN(number) ? text.trim().toLowerCase() : number;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === "" || y === "") { return x === "" ? (y === "" ? 0 : 1) : -1; }
        if (typeof x !== typeof y) { return typeof x === "number" ? -1 : 1; }
        return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
});
"""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?: / \d+(?:\.\d+)?)?")


def _escape(text: object) -> str:
    return html.escape(clean(str(text)))


def _td(text: object) -> str:
    """A cell; right-aligned when it holds a number (a score, "9.00 / 15.00", "3 / 12")."""
    shown = str(text)
    numeric = bool(_NUMBER.fullmatch(shown))
    return f'<td class="n">{_escape(shown)}</td>' if numeric else f"<td>{_escape(shown)}</td>"


def _table(header: list[str], rows: list[list[str]]) -> str:
    """An HTML table; NONE as a paragraph when there are no rows (as report.md says it)."""
    if not rows:
        return f"<p>{NONE}</p>"
    head = "".join(f"<th>{_escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_td(cell) for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _image(data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img alt="{alt}" src="data:image/png;base64,{encoded}">'


def _learner_cell(row: LearnerRow) -> str:
    name = _escape(row.learner)
    if not row.linked:
        return f"<td>{name}</td>"
    return f'<td data-sort="{name}"><a href="{name}/summary.md">{name}</a></td>'


def _total_cell(text: str) -> str:
    """The total, sorted by its points (a row without a grade sorts last)."""
    number = _NUMBER.match(text)
    sort = number.group(0).split(" / ")[0] if number else ""
    return f'<td class="n" data-sort="{sort}">{_escape(text)}</td>'


def _learners_table(report: ClassReport) -> str:
    if not report.rows:
        return f"<p>{NONE}</p>"
    header = learner_header(report)
    numbers = len(report.columns) + 1
    head = "".join(
        f'<th class="n">{_escape(h)}</th>' if 0 < i <= numbers else f"<th>{_escape(h)}</th>"
        for i, h in enumerate(header)
    )
    body = []
    for row in report.rows:
        cells = learner_cells(report, row)
        tds = [_td(c) for c in cells[: numbers - 1]] + [_total_cell(cells[numbers - 1])]
        tds += [_td(c) for c in cells[numbers:]]
        flagged = ' class="flagged"' if row.similarity.endswith("(flagged)") else ""
        body.append(f"<tr{flagged}>{_learner_cell(row)}{''.join(tds)}</tr>")
    return (
        f'<div class="wide"><table class="sortable" id="learners"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _failure_parts(report: ClassReport) -> list[str]:
    parts = ["<h2>Known mistakes</h2>"]
    rows = [
        [str(r.learners), r.component, r.mistake, r.message, r.who_text] for r in report.mistakes
    ]
    parts.append(_table(["Learners", "Component", "Known mistake", "Explanation", "Who"], rows))
    parts.append("<h2>Most common failure messages</h2>")
    rows = [[str(r.learners), r.component, r.message, r.who_text] for r in report.failures]
    parts.append(_table(["Learners", "Component", "Message", "Who"], rows))
    if report.showing:
        parts.append(f"<p>{_escape(report.showing)}</p>")
    parts.append("<h2>Not implemented yet</h2>")
    parts += [f"<p>{_escape(line)}</p>" for line in report.not_implemented_lines() or [NONE]]
    return parts


def _learner_list_parts(report: ClassReport) -> list[str]:
    parts = ["<h2>Learners whose grading errored</h2>"]
    parts.append(_table(["Learner", "Error"], [[w, e] for w, e in report.errored]))
    for title, entries in (
        ("Learners with nothing to grade", report.nothing_submitted),
        ("Learners not graded yet", report.not_graded_yet),
    ):
        if entries:
            parts += [f"<h2>{title}</h2>", _table(["Learner", "Why"], [[w, y] for w, y in entries])]
    parts.append("<h2>Tamper flags</h2>")
    if not report.tampered and not report.tamper_checked:
        parts.append(f"<p>{_with_code(TAMPER_NOT_CHECKED)}</p>")
    else:
        parts.append(_table(["Learner", "Files"], [[w, f] for w, f in report.tampered]))
        if not report.tamper_checked:
            parts.append(f"<p>{_with_code(TAMPER_VISIBLE_ONLY)}</p>")
    if report.review:
        parts.append(f"<h2>{_escape(REVIEW_HEADING)}</h2>")
        parts.append(_table(["Learner", "Where and what"], [[w, f] for w, f in report.review]))
    return parts


def _tests_table(report: ClassReport) -> str:
    """The pass rate per test: a test's description with its `code spans` as <code>, and its
    parametrized id (if any) always <code> (report_markdown.test_cell)."""
    if not report.tests:
        return f"<p>{NONE}</p>"
    rows = []
    for name, passed, ran in report.tests_failed:
        description, test_id = split_test_name(name)
        shown = _with_code(description)
        shown += f" [<code>{_escape(test_id)}</code>]" if test_id else ""
        rows.append(f"<tr><td>{shown}</td>{_td(f'{passed} / {ran}')}</tr>")
    head = "<thead><tr><th>Test</th><th>Passed</th></tr></thead>"
    return f"<table>{head}<tbody>{''.join(rows)}</tbody></table>"


def _with_code(text: str) -> str:
    """Escaped text whose `code spans` (as report.md writes commands) are <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _escape(text))


def _summary_parts(report: ClassReport) -> list[str]:
    parts = [f"<p>{_with_code(line)}</p>" for line in summary_lines(report)]
    if report.similarity_page:
        page = _escape(report.similarity_page)
        parts.append(f'<p><a href="{page}">Open the similarity check ({page})</a></p>')
    return parts


def render_html(report: ClassReport) -> str:
    title = _escape(f"{report.course}: class report")
    parts = [
        "<!doctype html>",
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>',
        f"<style>{STYLE}</style><script>{SORT_SCRIPT}</script></head><body>",
        f"<h1>{title}</h1>",
        *_summary_parts(report),
        "<h2>Score distribution</h2>",
        _image(report.figure, "Score distribution")
        if report.figure
        else f"<p>{_with_code(figure_text(report))}</p>",
        "<h2>Score per component</h2>",
        _table(
            ["Component", "Mean", "Full marks"],
            [[t, mean_text(m, p, n), f"{f} / {n}"] for t, m, p, f, n in report.components],
        ),
    ]
    if report.component_figure:
        parts.append(_image(report.component_figure, "Score distribution per component"))
    parts.append("<h2>Learners</h2>")
    if report.rows:
        parts.append(f"<p>{_escape(LEARNERS_LINE + LEARNERS_SORT)}</p>")
    parts.append(_learners_table(report))
    parts += [*_failure_parts(report), *_learner_list_parts(report)]
    parts.append("<h2>Pass rate per test (most failed first)</h2>")
    if report.tests:
        parts.append(f"<p>{_escape(PASS_RATE_LINE)}</p>")
    if report.tests_failed or not report.tests:
        parts.append(_tests_table(report))
    if report.tests_all_passed:
        parts.append(f"<p>{_escape(report.tests_all_passed)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
