"""The bundled example class graded as a roster CSV: one row per learner, real course.

A subset keeps it short: amara (correct, 100), ben (untouched stubs, 0), plus a learner whose
repository is missing and one whose clone URL cannot be reached (nothing listens on port 1 of
this machine); both get a row with their error.
"""

from __future__ import annotations

from pathlib import Path

from tests.batch.conftest import ROOT, read_gradebook, run_cli

CLASS = ROOT / "examples" / "submissions"
COMPONENTS = ("softmax", "attention", "multi_head_attention", "feed_forward", "add_norm", "encoder")


def test_the_example_class_as_a_roster_gives_one_row_per_learner(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "learner,repo\n"
        f"ben,{CLASS / 'ben'}\n"
        f"amara,{(CLASS / 'amara').as_uri()}\n"
        "ghost,missing/ghost\n"
        "remote,git://127.0.0.1:1/remote/t101.git\n"
    )
    out = tmp_path / "grades"
    done = run_cli(
        "grade-class",
        str(roster),
        "--out",
        str(out),
        "--course",
        str(ROOT / "course.toml"),
        "--timeout",
        "2",
        "--jobs",
        "2",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr  # ghost and remote cannot be graded
    rows = {row["learner"]: row for row in read_gradebook(out / "gradebook.csv")}
    assert list(rows) == ["amara", "ben", "ghost", "remote"]
    assert [rows["amara"][c] for c in COMPONENTS] == [
        "10.00",
        "20.00",
        "25.00",
        "10.00",
        "10.00",
        "25.00",
    ]
    assert (rows["amara"]["total"], rows["amara"]["max_score"]) == ("100.00", "100.00")
    assert rows["ben"]["total"] == "0.00" and not rows["ben"]["errors"]
    assert (
        rows["ghost"]["errors"]
        == f"The repository {tmp_path / 'missing' / 'ghost'} does not exist."
    )
    assert rows["remote"]["errors"].startswith(
        "git could not clone git://127.0.0.1:1/remote/t101.git: "
    )
    assert rows["amara"]["commit"] == ""  # a plain folder: graded as it is, no commit
    for learner in ("amara", "ben"):
        assert (out / learner / "results.json").is_file()
        assert (out / learner / "summary.md").is_file()
    assert "2 of 4 learners graded." in (out / "report.md").read_text()
