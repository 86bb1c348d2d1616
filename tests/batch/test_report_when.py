"""The class report says when the class was graded and how (seed, hidden tests), read from the
learners' own records and results.json (H40: a report read a week later did not say)."""

import json

from autograder.gradebook.report import Component, build_report, render_markdown
from autograder.gradebook.report_model import GRADED_WHEN
from autograder.gradebook.store import LearnerRecord, learner_dir

PARTS = [Component("a", "Part A", 10.0)]


def _learner(out, name, graded_at, seed=0, hidden=True, timeout=None):
    folder = learner_dir(out, name)
    folder.mkdir(parents=True)
    extra = {"seed": seed, "hidden_included": hidden, "test_timeout_s": timeout}
    (folder / "results.json").write_text(json.dumps({"tests": [], "extra_data": extra}))
    return LearnerRecord(name, components={"a": 1.0}, total=1.0, graded_at=graded_at)


def _first_lines(tmp_path, records) -> list[str]:
    markdown = render_markdown(build_report(tmp_path, records, PARTS, "Course"))
    return markdown.split("## Score distribution")[0].split("\n")[2:-2]


def test_the_first_and_last_grading_time_in_utc_with_the_seed_and_the_tests_run(tmp_path):
    records = [
        _learner(tmp_path, "kim", "2026-12-01T23:59:30+00:00"),
        _learner(tmp_path, "sam", "2026-12-02T05:40:10+05:30"),  # 00:10 UTC
        LearnerRecord("lee", error="Its repository is empty.", graded_at="2026-12-03T09:00:00Z"),
    ]
    assert _first_lines(tmp_path, records)[2] == (
        "Graded from 2026-12-01 23:59 to 2026-12-02 00:10 UTC (seed 0, visible and hidden tests)."
    )


def test_one_minute_reads_on_and_a_visible_only_run_says_so(tmp_path):
    records = [
        _learner(tmp_path, "kim", "2026-12-01T10:00:05+00:00", seed=7, hidden=False),
        _learner(tmp_path, "sam", "2026-12-01T10:00:50+00:00", seed=7, hidden=False),
    ]
    assert _first_lines(tmp_path, records)[2] == (
        "Graded on 2026-12-01 10:00 UTC (seed 7, visible tests only)."
    )


def test_records_without_a_time_or_results_say_nothing_of_it(tmp_path):
    records = [LearnerRecord("kim", components={"a": 1.0}, total=1.0)]
    markdown = render_markdown(build_report(tmp_path, records, PARTS, "Course"))
    assert GRADED_WHEN.split("{")[0] not in markdown


def test_the_time_limit_per_test_is_said(tmp_path):
    """H46: a run with --timeout 5 read like any other."""
    records = [_learner(tmp_path, "kim", "2026-12-01T10:00:05+00:00", timeout=5.0)]
    assert _first_lines(tmp_path, records)[2] == (
        "Graded on 2026-12-01 10:00 UTC (seed 0, visible and hidden tests, 5 s of learner code "
        "per test)."
    )
