"""The class report says "None." where a section has no rows, in report.md and report.html
alike, and "no learner graded" instead of means when nobody was graded (no grading here)."""

import re

from rich.console import Console

from autograder.config import load_course
from autograder.gradebook.class_output import component_table
from autograder.gradebook.report import (
    Component,
    build_report,
    render_html,
    render_markdown,
    write_report,
)
from autograder.gradebook.store import LearnerRecord
from tests.batch.conftest import TOY_COURSE

PARTS = [Component("a", "Part A", 10.0), Component("b", "Part B", 5.0)]


def _sections(html: str) -> dict[str, str]:
    """Each h2 heading of the HTML report and what follows it up to the next heading."""
    body = html.split("</h1>", 1)[1].removesuffix("</body></html>\n")
    pieces = re.split(r"<h2>(.*?)</h2>", body)
    return dict(zip(pieces[1::2], (p.replace("\n", "") for p in pieces[2::2]), strict=True))


def test_html_says_none_where_markdown_does_and_shows_no_header_only_table(tmp_path):
    records = [LearnerRecord("kim", components={"a": 10.0, "b": 5.0}, total=15.0, max_score=15.0)]
    report = build_report(tmp_path, records, PARTS, "Course")
    markdown = render_markdown(report)
    sections = _sections(render_html(report))
    for heading in (
        "Known mistakes",
        "Most common failure messages",
        "Not implemented yet",
        "Learners whose grading errored",
        "Tamper flags",
    ):
        assert sections[heading] == "<p>None.</p>", heading
        assert f"## {heading}" in markdown
    assert markdown.count("\nNone.\n") == 6  # and "Pass rate per test": kim has no results.json
    assert sections["Pass rate per test (most failed first)"] == "<p>None.</p>"
    assert (
        '<td>Part A</td><td class="n">10.00 / 10.00</td><td class="n">1 / 1</td>'
        in sections["Score per component"]
    )


def test_no_learner_graded_shows_no_means_anywhere(tmp_path):
    records = [LearnerRecord("kim", error="The repository is missing.")]
    write_report(tmp_path, records, PARTS, "Course")
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "| Part A | no learner graded | 0 / 0 |" in markdown
    assert '<td>Part B</td><td>no learner graded</td><td class="n">0 / 0</td>' in html
    assert "0.00 /" not in markdown and "0.00 /" not in html
    assert "(no figure: no learner graded)" in markdown and "matplotlib" not in markdown
    assert not (tmp_path / "score_distribution.png").exists()
    assert "0 of 1 learners graded." in markdown


def test_the_terminal_table_says_no_learner_graded_instead_of_means():
    config = load_course(TOY_COURSE)
    console = Console(record=True, width=120, color_system=None)
    console.print(component_table(config, [LearnerRecord("kim", error="Gone.")]))
    text = console.export_text()
    assert "0 of 1 graded" in text
    assert "0.00" not in text
    rows = [line for line in text.splitlines() if "no learner graded" in line]
    assert len(rows) == 3  # Scaling, Normalizing and the total


def test_tamper_flags_say_what_was_compared_when_the_class_was_graded_without_a_manifest(
    tmp_path,
):
    """A new-user trial read "Tamper flags ... None." after grade-class without --manifest as
    "checked, nothing changed": without the manifest only the visible tests are compared (each
    learner's copy with yours), and the section says so, with or without a changed file."""
    import html
    import json

    from autograder.gradebook.report_model import TAMPER_NOT_CHECKED
    from autograder.gradebook.store import RUN_FILE

    records = [LearnerRecord("kim", components={"a": 10.0, "b": 5.0}, total=15.0, max_score=15.0)]
    for manifest, said in (("", TAMPER_NOT_CHECKED), ("release/MANIFEST (1f2e)", "None.")):
        (tmp_path / RUN_FILE).write_text(json.dumps({"options": {"--manifest": manifest}}))
        report = build_report(tmp_path, records, PARTS, "Course")
        tamper = render_markdown(report).split("## Tamper flags", 1)[1].split("\n\n", 2)[1]
        assert tamper == said
        shown = html.escape(said).replace("`--manifest`", "<code>--manifest</code>")
        assert _sections(render_html(report))["Tamper flags"] == f"<p>{shown}</p>"
        assert ("<code>--manifest</code>" in shown) == (manifest == "")  # no raw backticks
    assert TAMPER_NOT_CHECKED == (
        "No learner changed the visible tests. Only the visible tests were compared: the class "
        "was graded without `--manifest`, so the release's other protected files were not."
    )
    (tmp_path / RUN_FILE).write_text(json.dumps({"options": {"--manifest": ""}}))
    records[0].tamper = ["changed tests/graders/visible/test_a.py"]
    text = render_markdown(build_report(tmp_path, records, PARTS, "Course"))
    assert (
        "- `kim`: changed tests/graders/visible/test_a.py\n\n"
        "Only the visible tests were compared: the class was graded without `--manifest`, so "
        "the release's other protected files were not.\n"
    ) in text
