"""The class report: DIR/report.md, DIR/report.html and the score figure.

Built only from the per-learner folders (record.json and results.json), so a merged set of
shards reports exactly like one run. Sections: the score distribution (a matplotlib histogram,
`score_distribution.png`, also embedded in the HTML), pass rate per component (learners with
the component's full points) and per test, the most common failure messages, errored learners
and tamper flags. Learner text is escaped for Markdown tables and for HTML.

The components are course.toml's and the course's notebook assignments (`notebook`, see
docs/notebook.md). A notebook is graded only for learners whose repository holds it: its mean
and pass rate count those learners, and a note says how many of the graded learners they are.
"""

from __future__ import annotations

import base64
import html
import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder.gradebook.store import LearnerRecord, learner_dir
from autograder.reports.files import atomic_write_text
from autograder.reports.sanitize import clean, first_sentence

MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
FIGURE_FILE = "score_distribution.png"
TOP_FAILURES = 10
NOT_SUBMITTED = (
    "{title}: graded for the {have} of {graded} graded learners whose repository holds it; "
    "the others have an empty cell in gradebook.csv."
)
NO_MATPLOTLIB = (
    "The score figure needs matplotlib; install it with `pip install 't101-autograder[report]'`."
)


@dataclass
class Component:
    """A column of the gradebook. optional: graded only when the learner's repository holds
    it (a notebook); absent from the records of the others."""

    name: str
    title: str
    points: float
    optional: bool = False


@dataclass
class ClassReport:
    """Everything the report shows, as plain rows (strings and numbers)."""

    course: str
    learners: int
    graded: int
    totals: list[float]
    max_score: float
    components: list[tuple[str, float, float, int, int]]  # title, mean, points, full, graded
    tests: list[tuple[str, int, int]]  # test name, passed, ran
    failures: list[tuple[str, int]]  # message, learners
    errored: list[tuple[str, str]]  # learner, error
    tampered: list[tuple[str, str]]  # learner, files
    figure: bytes = b""
    notes: list[str] = field(default_factory=list)


def build_report(
    out: Path, records: list[LearnerRecord], components: list[Component], course: str
) -> ClassReport:
    graded = [r for r in records if not r.failed]
    components = submitted_components(graded, components)
    max_score = sum(c.points for c in components)
    rows, notes = [], []
    for c in components:
        scores = component_scores(graded, c)
        full = sum(1 for s in scores if s >= c.points - 1e-9)
        mean = statistics.fmean(scores) if scores else 0.0
        rows.append((c.title, mean, c.points, full, len(scores)))
        if c.optional and len(scores) < len(graded):
            notes.append(NOT_SUBMITTED.format(title=c.title, have=len(scores), graded=len(graded)))
    passed: Counter[str] = Counter()
    ran: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    for record in graded:
        seen: set[str] = set()
        for test in _tests(out, record.learner):
            ran[test["name"]] += 1
            if test.get("status") == "passed":
                passed[test["name"]] += 1
            else:
                message = first_sentence(clean(test.get("output", ""))) or "(no message)"
                seen.add(message)
        failures.update(seen)  # count learners, not tests
    # The tests most learners fail first: that is where the class needs help.
    tests = sorted(
        ((name, passed[name], ran[name]) for name in ran),
        key=lambda row: (row[1] / row[2] if row[2] else 1.0, row[0]),
    )
    return ClassReport(
        course=course,
        learners=len(records),
        graded=len(graded),
        totals=[r.total or 0.0 for r in graded],
        max_score=max_score,
        components=rows,
        tests=tests,
        failures=sorted(failures.items(), key=lambda item: (-item[1], item[0]))[:TOP_FAILURES],
        errored=[(r.learner, r.error) for r in records if r.failed],
        tampered=[(r.learner, "; ".join(r.tamper)) for r in records if r.tamper],
        notes=notes,
    )


def submitted_components(
    graded: list[LearnerRecord], components: list[Component]
) -> list[Component]:
    """The components to report: every course component, and an optional one (a notebook) only
    when some graded learner has it, so that a class without notebooks is out of 100, not 120."""
    return [c for c in components if not c.optional or component_scores(graded, c)]


def component_scores(graded: list[LearnerRecord], component: Component) -> list[float]:
    """The component's score of each graded learner; an optional component (a notebook) only
    of the learners that have it, a course component 0 when a record lacks it."""
    if component.optional:
        return [r.components[component.name] for r in graded if component.name in r.components]
    return [r.components.get(component.name, 0.0) for r in graded]


def _tests(out: Path, learner: str) -> list[dict]:
    try:
        document = json.loads((learner_dir(out, learner) / "results.json").read_text("utf-8"))
    except (OSError, ValueError):
        return []
    return [t for t in document.get("tests", []) if isinstance(t, dict) and "name" in t]


def score_figure(totals: list[float], max_score: float) -> bytes:
    """A PNG histogram of the totals; b"" when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return b""
    import io

    figure, axes = pyplot.subplots(figsize=(6, 3.2), dpi=100)
    bins = [max_score * i / 10 for i in range(11)] if max_score > 0 else 10
    axes.hist(totals, bins=bins, color="#4c72b0", edgecolor="white")
    axes.set_xlabel(f"Total score (out of {max_score:g})")
    axes.set_ylabel("Learners")
    axes.set_title(f"Score distribution ({len(totals)} graded)")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    pyplot.close(figure)
    return buffer.getvalue()


def write_report(
    out: Path, records: list[LearnerRecord], components: list[Component], course: str
) -> ClassReport:
    """Write report.md, report.html and the figure into out; return what they show."""
    report = build_report(out, records, components, course)
    report.figure = score_figure(report.totals, report.max_score)
    if report.figure:
        (Path(out) / FIGURE_FILE).write_bytes(report.figure)
    else:
        report.notes.append(NO_MATPLOTLIB)
    atomic_write_text(Path(out) / MARKDOWN_FILE, render_markdown(report))
    atomic_write_text(Path(out) / HTML_FILE, render_html(report))
    return report


def _summary_lines(report: ClassReport) -> list[str]:
    lines = [f"{report.graded} of {report.learners} learners graded."]
    if report.totals:
        lines.append(
            f"Total: mean {statistics.fmean(report.totals):.2f}, median "
            f"{statistics.median(report.totals):.2f}, out of {report.max_score:.2f}."
        )
    return lines + report.notes


def _cell(text: str) -> str:
    return clean(text).replace("\n", " ").replace("|", "\\|")


def render_markdown(report: ClassReport) -> str:
    out = [f"# {_cell(report.course)}: class report", "", *_summary_lines(report), ""]
    out += ["## Score distribution", ""]
    out += [f"![Score distribution]({FIGURE_FILE})" if report.figure else "(no figure)", ""]
    out += [
        "## Score per component",
        "",
        "| Component | Mean | Full marks |",
        "|---|---:|---:|",
    ]
    for title, mean, points, full, count in report.components:
        rate = f"{full} / {count}"
        out.append(f"| {_cell(title)} | {mean:.2f} / {points:.2f} | {rate} |")
    out += ["", "## Pass rate per test (most failed first)", "", "| Test | Passed |", "|---|---:|"]
    out += [f"| {_cell(name)} | {p} / {n} |" for name, p, n in report.tests]
    out += ["", "## Most common failure messages", "", "| Learners | Message |", "|---:|---|"]
    out += [f"| {count} | {_cell(message)} |" for message, count in report.failures]
    out += ["", "## Learners whose grading errored", ""]
    out += [f"- `{_cell(who)}`: {_cell(error)}" for who, error in report.errored] or ["None."]
    out += ["", "## Tamper flags (changed visible tests; graded with pristine tests)", ""]
    out += [f"- `{_cell(who)}`: {_cell(files)}" for who, files in report.tampered] or ["None."]
    return "\n".join(out) + "\n"


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(report: ClassReport) -> str:
    title = html.escape(f"{clean(report.course)}: class report")
    parts = [
        "<!doctype html>",
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>',
        "<style>body{font-family:sans-serif;max-width:60rem;margin:auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}"
        "</style></head><body>",
        f"<h1>{title}</h1>",
        *[f"<p>{html.escape(line)}</p>" for line in _summary_lines(report)],
        "<h2>Score distribution</h2>",
    ]
    if report.figure:
        data = base64.b64encode(report.figure).decode("ascii")
        parts.append(f'<img alt="Score distribution" src="data:image/png;base64,{data}">')
    parts += ["<h2>Score per component</h2>"]
    parts.append(
        _table(
            ["Component", "Mean", "Full marks"],
            [[clean(t), f"{m:.2f} / {p:.2f}", f"{f} / {n}"] for t, m, p, f, n in report.components],
        )
    )
    parts += ["<h2>Pass rate per test (most failed first)</h2>"]
    parts.append(_table(["Test", "Passed"], [[clean(n), f"{p} / {r}"] for n, p, r in report.tests]))
    parts += ["<h2>Most common failure messages</h2>"]
    parts.append(_table(["Learners", "Message"], [[str(c), m] for m, c in report.failures]))
    parts += ["<h2>Learners whose grading errored</h2>"]
    parts.append(_table(["Learner", "Error"], [[w, clean(e)] for w, e in report.errored]))
    parts += ["<h2>Tamper flags</h2>"]
    parts.append(_table(["Learner", "Files"], [[w, f] for w, f in report.tampered]))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
