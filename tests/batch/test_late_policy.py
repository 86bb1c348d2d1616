"""The late policy (course.toml [late]) and the roster's extension_days, end to end on the toy
course (15 points): which commit is graded, the days late, the penalty, the gradebook's
columns, the learner's summary.md and results.json, and reruns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autograder.config import CourseConfigError, load_course
from autograder.gradebook import late, roster, store

from .conftest import (
    TOY,
    commit_all,
    copy_package,
    grade_class_main,
    gradebook_without_timing,
    init_repo,
    read_gradebook,
)

DEADLINE = "2026-08-15T23:59:00+05:30"  # 18:29 UTC
ON_TIME = "2026-08-15T12:00:00+00:00"
HALF_DAY_LATE = "2026-08-16T06:29:00+00:00"  # 12 hours after: 1 day started
DAY_AND_A_HALF = "2026-08-17T06:29:00+00:00"  # 36 hours after: 2 days started
FIVE_DAYS_LATE = "2026-08-20T18:30:00+00:00"  # after the end of a 3-day window


def _course(tmp_path: Path, late_table: str) -> Path:
    """The toy course, copied, with ``late_table`` appended to its course.toml."""
    course = tmp_path / "course"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("submissions", "__pycache__"))
    (course / "course.toml").write_text(
        (course / "course.toml").read_text(encoding="utf-8") + late_table, encoding="utf-8"
    )
    return course / "course.toml"


def _learner(folder: Path, *commits: tuple[str, str]) -> None:
    """A repository of the toy solution with one commit per (source, time): "solution" or
    "mistake" (the toy mistake: 10 of 15 points)."""
    init_repo(folder)
    for source, when in commits:
        copy_package(TOY / "solution" if source == "solution" else TOY / "submissions" / source,
                     folder)  # fmt: skip
        (folder / "history.txt").write_text(f"{source} {when}\n")
        commit_all(folder, f"{source} at {when}", when)


@pytest.fixture(scope="module")
def late_class(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("late_class")
    course = _course(base, "\n[late]\npenalty_per_day = 10\nmax_days = 3\n")
    repos = base / "repos"
    _learner(repos / "ontime", ("solution", ON_TIME))
    _learner(repos / "halfday", ("solution", HALF_DAY_LATE))
    _learner(repos / "dayandhalf", ("solution", DAY_AND_A_HALF))
    _learner(repos / "extended", ("solution", DAY_AND_A_HALF))
    # graded: the window's last commit (the mistake); the one after the window is not
    _learner(repos / "twice", ("mistake", HALF_DAY_LATE), ("solution", FIVE_DAYS_LATE))
    _learner(repos / "toolate", ("solution", FIVE_DAYS_LATE))
    csv_roster = base / "roster.csv"
    csv_roster.write_text(
        "learner,repo,extension_days\n"
        "ontime,repos/ontime,\n"
        "halfday,repos/halfday,0\n"
        "dayandhalf,repos/dayandhalf,\n"
        "extended,repos/extended,2\n"
        "twice,repos/twice,\n"
        "toolate,repos/toolate,\n",
        encoding="utf-8",
    )
    out = base / "out"
    assert grade_class_main(csv_roster, out, course=course, deadline=DEADLINE) == 1
    return {"out": out, "roster": csv_roster, "course": course, "base": base}


def test_each_learner_is_graded_in_their_window_with_the_penalty(late_class) -> None:
    rows = {row["learner"]: row for row in read_gradebook(late_class["out"] / "gradebook.csv")}
    cells = {
        name: (row["extension_days"], row["late_days"], row["raw_total"], row["late_penalty"],
               row["total"], row["late"])
        for name, row in rows.items()
    }  # fmt: skip
    assert cells == {
        "ontime": ("0", "0", "15.00", "0.00", "15.00", "no"),
        "halfday": ("0", "1", "15.00", "1.50", "13.50", "no"),  # 10% of 15 per day
        "dayandhalf": ("0", "2", "15.00", "3.00", "12.00", "no"),
        "extended": ("2", "0", "15.00", "0.00", "15.00", "no"),  # within their own deadline
        "twice": ("0", "1", "10.00", "1.50", "8.50", "yes"),  # a commit after the window
        "toolate": ("", "", "", "", "", ""),  # nothing graded: no row of the policy
    }


def test_the_gradebook_puts_the_late_columns_beside_late_and_total(late_class) -> None:
    header = (late_class["out"] / "gradebook.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",")[:6] == [
        "learner", "commit", "commit_time", "late", "extension_days", "late_days",
    ]  # fmt: skip
    assert header.split(",")[6:11] == ["scale", "normalize", "raw_total", "late_penalty", "total"]


def test_a_learner_without_a_commit_in_the_window_is_told_its_end(late_class) -> None:
    record = store.read_record(late_class["out"], "toolate")
    assert record is not None and record.nothing_submitted
    assert (
        "has no commit at or before the end of the late window 2026-08-18T18:29:00+00:00 (the "
        "deadline 2026-08-15T23:59:00+05:30, plus 3 days late)" in record.error
    )


def test_the_learner_reads_their_deadline_days_late_and_penalty(late_class) -> None:
    folder = late_class["out"] / "dayandhalf"
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    assert "**Total: 12.00 / 15.00**" in summary
    assert (
        "the last one at or before 2026-08-18T23:59:00+05:30, the end of your late window (your "
        "deadline 2026-08-15T23:59:00+05:30, then at most 3 days late)." in summary
    )
    assert (
        "It was committed 2 days after your deadline (each day started counts): the late policy "
        "takes 10% of the total points per day, 3.00 points; your total before the penalty was "
        "15.00." in summary
    )
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == pytest.approx(12.0)
    assert results["extra_data"]["graded_commit"]["late"] == {
        "deadline": "2026-08-15T23:59:00+05:30",
        "class_deadline": DEADLINE,
        "extension_days": 0,
        "days_late": 2,
        "penalty_per_day": 10.0,
        "max_days": 3,
        "cutoff": "2026-08-18T23:59:00+05:30",
        "penalty": pytest.approx(3.0),
        "raw_total": pytest.approx(15.0),
    }


def test_an_extension_moves_the_learners_own_deadline(late_class) -> None:
    summary = (late_class["out"] / "extended" / "summary.md").read_text(encoding="utf-8")
    assert (
        "your deadline 2026-08-17T23:59:00+05:30, the class deadline with your extension of 2 "
        "days, then at most 3 days late)" in summary
    )
    assert "It was on time: no late penalty." in summary


def test_a_rerun_with_another_extension_regrades_only_that_learner(
    late_class, tmp_path, capsys
) -> None:
    base, out = late_class["base"], tmp_path / "out"
    shutil.copytree(late_class["out"], out)  # the module's folder stays as graded
    before = {r.learner: r.run_id for r in store.read_records(out)}
    text = late_class["roster"].read_text(encoding="utf-8")
    changed = base / f"roster-{tmp_path.name}.csv"
    changed.write_text(
        text.replace("dayandhalf,repos/dayandhalf,", "dayandhalf,repos/dayandhalf,1")
    )
    assert (
        grade_class_main(changed, out, course=late_class["course"], deadline=DEADLINE, quiet=False)
        == 1
    )
    assert (
        late.EXTENSION_CHANGED.format(learners="1 learner has", out=out) in capsys.readouterr().err
    )
    after = {r.learner: r for r in store.read_records(out)}
    assert [name for name in before if after[name].run_id != before[name]] == ["dayandhalf"]
    assert (after["dayandhalf"].late_days, after["dayandhalf"].total) == (1, pytest.approx(13.5))


def test_a_changed_policy_is_a_changed_course_and_is_refused(late_class, capsys) -> None:
    course = late_class["course"]
    text = course.read_text(encoding="utf-8")
    course.write_text(text.replace("penalty_per_day = 10", "penalty_per_day = 20"))
    try:
        code = grade_class_main(late_class["roster"], late_class["out"], course=course,
                                deadline=DEADLINE)  # fmt: skip
    finally:
        course.write_text(text)
    assert code == 2
    assert "course.toml" in capsys.readouterr().err


def test_without_a_policy_an_extension_moves_the_deadline_and_takes_nothing(tmp_path) -> None:
    repos = tmp_path / "repos"
    _learner(repos / "extended", ("solution", DAY_AND_A_HALF))
    _learner(repos / "plain", ("mistake", ON_TIME), ("solution", DAY_AND_A_HALF))
    csv_roster = tmp_path / "roster.csv"
    csv_roster.write_text(
        "learner,repo,extension_days\nextended,repos/extended,2\nplain,repos/plain,\n"
    )
    out = tmp_path / "out"
    assert grade_class_main(csv_roster, out, course=TOY / "course.toml", deadline=DEADLINE) == 0
    rows = {row["learner"]: row for row in read_gradebook(out / "gradebook.csv")}
    assert (rows["extended"]["total"], rows["extended"]["late_days"]) == ("15.00", "0")
    assert (rows["plain"]["total"], rows["plain"]["late"], rows["plain"]["late_days"]) == (
        "10.00", "yes", "",
    )  # fmt: skip
    summary = (out / "extended" / "summary.md").read_text(encoding="utf-8")
    assert (
        "the last one at or before your deadline 2026-08-17T23:59:00+05:30 (the class deadline "
        "2026-08-15T23:59:00+05:30 with your extension of 2 days)." in summary
    )


def test_without_late_or_extensions_the_gradebook_is_as_before(tmp_path) -> None:
    repos = tmp_path / "repos"
    _learner(repos / "plain", ("solution", ON_TIME))
    out = tmp_path / "out"
    assert grade_class_main(repos, out, deadline=DEADLINE) == 0
    header = (out / "gradebook.csv").read_text(encoding="utf-8").splitlines()[0]
    assert "late_days" not in header and "raw_total" not in header
    assert "late window" not in (out / "plain" / "summary.md").read_text(encoding="utf-8")


def test_a_late_table_with_a_wrong_value_is_refused_with_a_sentence(tmp_path) -> None:
    course = _course(tmp_path, "\n[late]\npenalty_per_day = 150\nmax_days = 0\n")
    with pytest.raises(CourseConfigError) as raised:
        load_course(course)
    said = str(raised.value)
    assert "late.penalty_per_day must be a number at most 100; got 150." in said
    assert "late.max_days must be greater than or equal to 1; got 0." in said


def test_a_roster_extension_that_is_no_whole_number_is_refused(tmp_path) -> None:
    path = tmp_path / "roster.csv"
    path.write_text("learner,repo,extension_days\namara,amara,1.5\n")
    with pytest.raises(roster.RosterError) as raised:
        roster.read_roster(path)
    assert str(raised.value) == roster.BAD_EXTENSION.format(
        path=path, learner="amara", value="1.5", line=2, most=roster.MAX_EXTENSION_DAYS
    )


def test_days_late_count_each_day_started() -> None:
    policy = late.LatePolicy(penalty_per_day=10, max_days=3)
    span = late.window(DEADLINE, 0, policy)
    assert span is not None
    judged = {
        when: late.judge(span, when).days_late
        for when in ("2026-08-15T18:29:00+00:00", "2026-08-15T18:30:00+00:00",
                     "2026-08-16T18:29:00+00:00", "2026-08-16T18:29:01+00:00")
    }  # fmt: skip
    assert list(judged.values()) == [0, 1, 1, 2]


def test_the_class_report_says_the_policy_the_late_learners_and_the_extensions(late_class) -> None:
    from autograder.gradebook import report

    markdown = (late_class["out"] / report.MARKDOWN_FILE).read_text(encoding="utf-8")
    assert (
        "Late policy: each learner's last commit up to 3 days after their own deadline (the "
        "deadline plus their roster's extension_days) is graded and loses 10% of the total points "
        "per day started after it. Late: 3 learners, 6.00 points taken in all; with an "
        "extension: extended." in markdown
    )
    assert (
        "Graded by the deadline 2026-08-15T23:59:00+05:30, each learner's own deadline" in markdown
    )
    row = "| [`dayandhalf`](dayandhalf/summary.md) | 10.00 | 5.00 | 12.00 / 15.00 | no | 0 | 2 |"
    assert row + " 3.00 |" in markdown


def test_shards_of_a_late_class_merge_into_the_whole_runs_gradebook(late_class, tmp_path) -> None:
    from autograder.commands import merge

    shards = [tmp_path / f"shard{i}" for i in (1, 2)]
    for index, shard in enumerate(shards, start=1):
        code = grade_class_main(
            late_class["roster"], shard, course=late_class["course"], deadline=DEADLINE,
            shard=f"{index}/2",
        )  # fmt: skip
        assert code in (0, 1)
    merged = tmp_path / "merged"
    assert merge.main(shards=shards, out=merged, course=late_class["course"], quiet=True) == 1
    assert gradebook_without_timing(merged / "gradebook.csv") == gradebook_without_timing(
        late_class["out"] / "gradebook.csv"
    )
