"""The class report shows every parametrized test's id the same way, as code: an id with an
edge underscore (`near_-1000`) was a code span in report.md and `axis=0` plain text."""

from __future__ import annotations

import json

from autograder.gradebook.report import Component, build_report, render_html, render_markdown
from autograder.gradebook.report_model import split_test_name
from autograder.gradebook.store import LearnerRecord

NAMES = (
    "Softmax: stays finite for very large and very negative logits [near_-1000]",
    "Softmax: every slice along `axis` sums to 1 [axis=0]",
    "Softmax: returns a float in [-1, 1] equal to a.b / (|a| |b|)",
    "Softmax: splits on a pipe [a|b]",
)


def _report(tmp_path):
    folder = tmp_path / "kim"
    folder.mkdir()
    # failed: the pass-rate table lists only the tests some learner failed
    tests = [{"name": n, "status": "failed", "output": "", "tags": ["softmax"]} for n in NAMES]
    (folder / "results.json").write_text(json.dumps({"tests": tests}))
    record = LearnerRecord("kim", components={"softmax": 10.0}, total=10.0, max_score=10.0)
    return build_report(tmp_path, [record], [Component("softmax", "Softmax", 10.0)], "Course")


def test_a_name_splits_into_its_description_and_its_id_only_when_it_ends_with_one():
    assert split_test_name(NAMES[0]) == (
        "Softmax: stays finite for very large and very negative logits",
        "near_-1000",
    )
    assert split_test_name(NAMES[2]) == (NAMES[2], "")  # brackets inside the description


def test_report_md_shows_every_id_as_code(tmp_path):
    markdown = render_markdown(_report(tmp_path))
    assert "| Softmax: stays finite for very large and very negative logits [`near_-1000`] |" in (
        markdown
    )
    assert "| Softmax: every slice along `axis` sums to 1 [`axis=0`] |" in markdown
    assert "| Softmax: returns a float in [-1, 1] equal to a.b / (\\|a\\| \\|b\\|) |" in markdown
    assert "| Softmax: splits on a pipe [`a\\|b`] |" in markdown


def test_report_html_shows_every_id_as_code(tmp_path):
    html = render_html(_report(tmp_path))
    assert "very negative logits [<code>near_-1000</code>]</td>" in html
    assert "every slice along <code>axis</code> sums to 1 [<code>axis=0</code>]</td>" in html
    assert "<td>Softmax: returns a float in [-1, 1] equal to a.b / (|a| |b|)</td>" in html
