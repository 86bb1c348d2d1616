"""The class report in a real browser: headless Chromium draws it (a screenshot) and sorts its
Learners table when a heading is clicked. Skipped where no Chromium is installed
(`apt-get install chromium` on Debian)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.gradebook.report import Component, write_report
from autograder.gradebook.store import RECORD_FILE, LearnerRecord

BROWSER = next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome")
        if (found := shutil.which(name))
    ),
    None,
)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium installed")
PARTS = [Component("a", "Part A", 10.0), Component("b", "Part B", 5.0)]
#: Clicks the Total heading once the page's own script has set the table up.
CLICK_TOTAL = """<script>
document.addEventListener("DOMContentLoaded", function () {
  setTimeout(function () {
    var headings = document.querySelectorAll("#learners th");
    headings[headings.length - 1].click();
  }, 0);
});
</script></body>"""


def _chromium(*args: str) -> subprocess.CompletedProcess:
    assert BROWSER is not None
    command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.fixture
def class_report(tmp_path: Path) -> Path:
    records = [
        LearnerRecord("sam", components={"a": 4.0, "b": 5.0}, total=9.0, max_score=15.0),
        LearnerRecord("kim", components={"a": 10.0, "b": 5.0}, total=15.0, max_score=15.0),
        LearnerRecord("ada", components={"a": 10.0, "b": 2.0}, total=12.0, max_score=15.0),
        LearnerRecord("lee", error="The repository is missing."),
    ]
    for record in records:
        (tmp_path / record.learner).mkdir()
        (tmp_path / record.learner / RECORD_FILE).write_text(record.to_json())
    write_report(tmp_path, records, PARTS, "Course")
    return tmp_path / "report.html"


def test_the_report_draws_in_a_browser(class_report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    done = _chromium(f"--screenshot={shot}", "--window-size=1200,1600", class_report.as_uri())
    assert shot.is_file(), done.stderr
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1200, 1600)
    assert len(png) > 20_000  # text, tables and two figures: no blank page


def test_clicking_the_total_heading_sorts_the_learners(class_report: Path) -> None:
    page = class_report.read_text(encoding="utf-8").replace("</body>", CLICK_TOTAL)
    class_report.write_text(page, encoding="utf-8")
    done = _chromium("--virtual-time-budget=2000", "--dump-dom", class_report.as_uri())
    table = done.stdout.split('id="learners"', 1)[1].split("</table>", 1)[0]
    order = re.findall(r'<a href="(\w+)/summary\.md">', table)
    assert order == ["sam", "ada", "kim", "lee"]  # 9, 12, 15 points, then the row without one
    assert 'aria-sort="ascending"' in table
