"""`autograder grade-class` end to end on a toy-course class of git repositories.

One uninterrupted run (module fixture) is the reference. Against it: a run killed with SIGKILL
halfway and rerun, shards merged, and a plain rerun must all give the same gradebook, byte for
byte apart from the timing columns. The class (conftest.toy_class) has commits on both sides of
the deadline, a tampered visible test, an empty folder and a learner with only late commits.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.commands.grade_class import NOT_IN_ROSTER
from autograder.gradebook import store
from autograder.gradebook.report_model import DEADLINE_NOTE
from autograder.gradebook.resume import ALL_SAVED
from tests.batch.conftest import (
    DEADLINE,
    TOY_COURSE,
    git,
    gradebook_without_timing,
    read_gradebook,
    report_without_timing,
    run_cli,
    wait_until_recorded,
)


def _args(roster: Path, out: Path, *extra: str, manifest: Path | None = None) -> list[str]:
    """grade-class arguments; the toy class's release manifest when it is given."""
    return [
        "grade-class",
        str(roster),
        "--out",
        str(out),
        "--course",
        str(TOY_COURSE),
        "--deadline",
        DEADLINE,
        "--timeout",
        "2",
        "-q",
        *(["--manifest", str(manifest)] if manifest else []),
        *extra,
    ]


@pytest.fixture(scope="module")
def whole(toy_class: dict) -> Path:
    out = toy_class["base"] / "whole"
    done = run_cli(
        *_args(toy_class["roster"], out, "--jobs", "2", manifest=toy_class["manifest"]),
        cwd=toy_class["base"],
    )
    assert done.returncode == 1, done.stderr  # two learners cannot be graded
    return out


def test_every_learner_gets_one_row_with_the_deadline_commit(whole: Path, toy_class: dict) -> None:
    rows = {row["learner"]: row for row in read_gradebook(whole / "gradebook.csv")}
    assert list(rows) == ["empty", "good", "late", "mistake"]
    good = rows["good"]
    assert (good["commit"], good["late"]) == (toy_class["good_on_time"], "yes")
    assert (good["scale"], good["normalize"], good["total"], good["max_score"]) == (
        "10.00",
        "5.00",
        "15.00",
        "15.00",
    )
    mistake = rows["mistake"]
    assert (mistake["scale"], mistake["total"], mistake["late"]) == ("5.00", "10.00", "no")
    assert mistake["commit_time"] == "2026-08-15T18:29:00+00:00"  # at the deadline counts
    assert mistake["tamper"] == "changed tests/graders/visible/test_toy_scale.py"
    assert good["tamper"] == "missing tests/graders/visible/test_toy_scale.py"  # the manifest
    assert "no commit at or before the deadline" in rows["late"]["errors"]
    assert rows["late"]["total"] == "" and rows["empty"]["errors"].endswith(
        "is empty, so there is nothing to grade."
    )
    assert not rows["good"]["errors"] and not rows["mistake"]["errors"]
    # the learner's clone is left as it was: HEAD is still the late, broken commit
    assert git(toy_class["roster"] / "good", "rev-parse", "HEAD") == toy_class["good_broken"]
    assert git(toy_class["roster"] / "good", "status", "--porcelain") == ""


def test_each_learner_has_reports_and_the_class_report_is_written(
    whole: Path, toy_class: dict
) -> None:
    results = json.loads((whole / "good" / "results.json").read_text())
    assert results["score"] == 15.0
    assert "**Total: 15.00 / 15.00**" in (whole / "good" / "summary.md").read_text()
    graded = results["extra_data"]["graded_commit"]
    assert (graded["commit"], graded["later"]) == (toy_class["good_on_time"], True)
    said = (
        f"Graded commit {graded['commit'][:12]} (committed 2026-08-10T12:00:00+00:00), the last "
        f"one at or before the deadline {DEADLINE}; your 1 later commit (by committer time, "
        f"the last at 2026-08-20T12:00:00+00:00) was not graded."
    )
    assert said in (whole / "good" / "summary.md").read_text()
    assert said in results["output"]  # what Gradescope shows first
    empty = (whole / "empty" / "summary.md").read_text()
    # named by the learner's id, not by where the instructor keeps the repository
    assert (
        "The folder empty is empty, so there is nothing to grade." in empty
        and str(toy_class["roster"]) not in empty
    )
    report = (whole / "report.md").read_text()
    assert "2 of 4 learners graded." in report
    assert ", 2 s of learner code per test)." in report  # --timeout 2 (H46)
    assert DEADLINE_NOTE.format(deadline=DEADLINE, later=1) in report
    assert "| Scaling | 7.50 / 10.00 | 1 / 2 |" in report
    assert "| Normalizing | 5.00 / 5.00 | 2 / 2 |" in report
    # the pass-rate table lists the tests some learner failed; a sentence counts the others
    assert "| Scaling: scale(x, nan) raises ValueError |" not in report
    assert "| Scaling: scale(x, 3.0) multiplies every entry by 3 | 1 / 2 |" in report
    assert report.endswith("\n\nEvery learner counted for them passed the other 4 tests.\n")
    assert "| 1 | Scaling | Known mistake in scale(x, …): It adds the factor" in report
    assert "- `late`: The repository" in report
    assert "- `mistake`: changed tests/graders/visible/test_toy_scale.py" in report
    assert (whole / "score_distribution.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (whole / "report.html").read_text()
    assert "data:image/png;base64," in html and "<td>Scaling</td>" in html
    assert not (whole / ".partial").exists()


def test_a_rerun_reuses_every_finished_learner(whole: Path, toy_class: dict) -> None:
    before = {r.learner: r.run_id for r in store.read_records(whole)}
    text = (whole / "gradebook.csv").read_text()
    args = _args(toy_class["roster"], whole, manifest=toy_class["manifest"])
    done = run_cli(*[a for a in args if a != "-q"], cwd=toy_class["base"])  # says what it does
    assert done.returncode == 1, done.stderr
    assert {r.learner: r.run_id for r in store.read_records(whole)} == before
    assert (whole / "gradebook.csv").read_text() == text  # nothing regraded: timing too
    said = " ".join(done.stderr.split())  # rich wraps stderr at its width
    assert ALL_SAVED.format(total=4, out=whole.resolve()) in said
    assert "grading the others" not in said


def test_regrade_grades_the_named_learners_again_and_keeps_the_others(
    whole: Path, toy_class: dict, tmp_path: Path
) -> None:
    """H46: a learner who fixed their repository kept the row 'is empty' until --force, which
    regrades the whole class; --regrade NAME grades only them."""
    out = tmp_path / "out"
    shutil.copytree(whole, out)
    before = {r.learner: r.run_id for r in store.read_records(out)}
    text = gradebook_without_timing(out / "gradebook.csv")
    regrade = ("--regrade", "empty", "--regrade", "good")
    args = _args(toy_class["roster"], out, *regrade, manifest=toy_class["manifest"])
    done = run_cli(*args, cwd=toy_class["base"])
    assert done.returncode == 1, done.stderr
    after = {r.learner: r.run_id for r in store.read_records(out)}
    assert sorted(name for name in after if after[name] != before[name]) == ["empty", "good"]
    assert gradebook_without_timing(out / "gradebook.csv") == text  # nothing else changed
    wrong = run_cli(*_args(toy_class["roster"], out, "--regrade", "nobody"), cwd=tmp_path)
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == NOT_IN_ROSTER.format(names="nobody", roster=toy_class["roster"])


def test_a_run_killed_halfway_resumes_to_the_same_gradebook(whole: Path, toy_class: dict) -> None:
    out = toy_class["base"] / "killed"
    command = [
        sys.executable,
        "-m",
        "autograder",
        *_args(toy_class["roster"], out, "-j", "1", manifest=toy_class["manifest"]),
    ]
    scratch = toy_class["base"] / "killed-tmp"
    scratch.mkdir()
    process = subprocess.Popen(
        command,
        cwd=toy_class["base"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    # Learners go in id order: empty (no grading), then good (a real grade): kill during it.
    wait_until_recorded(process, out)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()

    # The batch's temporary folders (exported commits, private copies, the zygote's, the
    # killed command's multiprocessing folder) go with it.
    def leftovers() -> list[str]:  # os.walk skips what goes while it walks
        return sorted(
            os.path.relpath(os.path.join(top, name), scratch)
            for top, folders, files in os.walk(scratch)
            for name in folders + files
        )

    deadline = time.monotonic() + 10
    while (leftovers() or (out / ".expected").exists()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers() == []
    assert not (out / ".expected").exists()  # the expected values shared by this batch
    survivors = {r.learner: r.run_id for r in store.read_records(out)}
    assert "empty" in survivors and len(survivors) < 4
    assert not (out / "gradebook.csv").exists()

    done = run_cli(
        *_args(toy_class["roster"], out, "-j", "2", manifest=toy_class["manifest"]),
        cwd=toy_class["base"],
    )
    assert done.returncode == 1, done.stderr
    after = {r.learner: r.run_id for r in store.read_records(out)}
    assert {name: after[name] for name in survivors} == survivors  # resumed, not regraded
    assert gradebook_without_timing(out / "gradebook.csv") == gradebook_without_timing(
        whole / "gradebook.csv"
    )
    assert not (out / ".partial").exists()


def _graded_shards(toy_class: dict, folder: Path) -> list[Path]:
    """The toy class graded as two shards at once (folder/shard1, folder/shard2), one job each."""
    shards = [folder / "shard1", folder / "shard2"]
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "autograder",
                *_args(
                    toy_class["roster"],
                    out,
                    "-j",
                    "1",
                    "--shard",
                    f"{i}/2",
                    manifest=toy_class["manifest"],
                ),
            ],
            cwd=toy_class["base"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, out in enumerate(shards, start=1)
    ]
    for run in runs:
        _, err = run.communicate(timeout=600)
        assert run.returncode in (0, 1), err
    return shards


def test_shards_merged_equal_the_whole_run(whole: Path, toy_class: dict, tmp_path: Path) -> None:
    shards = _graded_shards(toy_class, tmp_path)
    first = [row["learner"] for row in read_gradebook(shards[0] / "gradebook.csv")]
    second = [row["learner"] for row in read_gradebook(shards[1] / "gradebook.csv")]
    assert (first, second) == (["empty", "late"], ["good", "mistake"])
    assert store.read_record(shards[1], "good").shard == "2/2"  # merge checks the shards
    everyone = ["empty", "good", "late", "mistake"]  # merge gives a missing shard's rows
    assert [store.read_run(shard)["everyone"] for shard in shards] == [everyone, everyone]

    merged = tmp_path / "merged"
    done = run_cli(
        "merge",
        *map(str, shards),
        "--out",
        str(merged),
        "--course",
        str(TOY_COURSE),
        "-q",
        cwd=toy_class["base"],
    )
    assert done.returncode == 1, done.stderr
    assert gradebook_without_timing(merged / "gradebook.csv") == gradebook_without_timing(
        whole / "gradebook.csv"
    )
    assert report_without_timing(merged / "report.md") == report_without_timing(whole / "report.md")

    again = run_cli(
        "merge",
        str(shards[0]),
        str(shards[0]),
        "--out",
        str(tmp_path / "twice"),
        "--course",
        str(TOY_COURSE),
        cwd=toy_class["base"],
    )
    assert again.returncode == 2
    assert "is in two shard folders" in again.stderr


def test_force_regrades_and_other_options_are_refused_without_it(
    toy_class: dict, tmp_path: Path
) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text(f"learner,repo\nempty,{toy_class['roster'] / 'empty'}\nghost,nowhere\n")
    out = tmp_path / "out"

    def run_ids(*extra: str) -> dict[str, str]:
        done = run_cli(*_args(roster, out, *extra), cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert "ghost: The repository" in done.stderr and "does not exist" in done.stderr
        return {r.learner: r.run_id for r in store.read_records(out)}

    first = run_ids()
    assert run_ids() == first
    forced = run_ids("--force")
    assert all(forced[name] != first[name] for name in first)
    refused = run_cli(*_args(roster, out, "--seed", "7"), cwd=tmp_path)
    assert refused.returncode == 2  # other settings: the grades in out are kept
    assert "--seed 0 there, 7 here" in " ".join(refused.stderr.split())
    assert {r.learner: r.run_id for r in store.read_records(out)} == forced
    reseeded = run_ids("--seed", "7", "--force")
    assert all(reseeded[name] != forced[name] for name in forced)
    assert [row["learner"] for row in read_gradebook(out / "gradebook.csv")] == ["empty", "ghost"]


@pytest.mark.parametrize(
    ("extra", "phrase"),
    [
        (["--shard", "3/2"], "--shard must look like i/n"),
        (["--jobs", "0"], "--jobs must be a whole number of at least 1"),
        (["--deadline", "2026-08-15"], "with a time zone"),
        (["--timeout", "0"], "--timeout must be a positive number"),
        (["--manifest", "nowhere.json"], "nowhere.json"),
    ],
)
def test_bad_options_stop_before_grading(
    toy_class: dict, tmp_path: Path, extra: list[str], phrase: str
) -> None:
    args = _args(toy_class["roster"], tmp_path / "out", manifest=toy_class["manifest"])
    args[args.index("--deadline") + 1 : args.index("--deadline") + 2] = [DEADLINE]
    done = run_cli(*args, *extra, cwd=tmp_path)
    assert done.returncode == 2
    assert phrase in done.stderr
    assert not (tmp_path / "out" / "gradebook.csv").exists()


def test_the_same_deadline_written_otherwise_keeps_every_grade(
    whole: Path, toy_class: dict, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(whole, out)
    text = (out / "gradebook.csv").read_text()
    args = _args(toy_class["roster"], out, manifest=toy_class["manifest"])
    utc = "2026-08-15T18:29:00Z"  # DEADLINE, 23:59 at +05:30, in UTC
    done = run_cli(*[utc if a == DEADLINE else a for a in args], cwd=toy_class["base"])
    assert done.returncode == 1, done.stderr
    assert (out / "gradebook.csv").read_text() == text  # nothing regraded: timing too
    assert DEADLINE_NOTE.format(deadline=DEADLINE, later=1) in (out / "report.md").read_text()
    later = "2026-08-15T18:30:00Z"  # one minute later: another deadline, everyone regraded
    done = run_cli(*[later if a == DEADLINE else a for a in args], "--force", cwd=toy_class["base"])
    assert done.returncode == 1, done.stderr
    assert {r.deadline for r in store.read_records(out)} == {later}
