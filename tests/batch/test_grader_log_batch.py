"""A learner's grader.log from grade-class is the one `autograder grade` writes (timings aside):
the batch wrote a header and a last line of its own, without pytest's session header
("test session starts", platform, rootdir) and its centred "N failed, M passed in Xs"."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from .conftest import DEADLINE, TOY, grade_class_main, run_cli

#: pytest's last line, centred (its width follows the time), and other durations
TIMING = re.compile(r"^=+ [^=]* in [0-9.]+s =+$| in [0-9.]+s", re.MULTILINE)


def test_a_batch_grader_log_is_the_one_grade_writes(tmp_path: Path) -> None:
    roster = tmp_path / "roster"
    shutil.copytree(TOY / "submissions" / "mistake", roster / "mistake")
    shutil.copytree(TOY / "solution", roster / "solution", ignore=shutil.ignore_patterns("*.toml"))
    course = str(TOY / "course.toml")
    batch = tmp_path / "batch"
    done = run_cli(
        "grade-class", str(roster), "--out", str(batch), "--course", course, "-q", "--jobs", "1",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr  # one harness child graded both, one after the other
    for learner, status in (("mistake", 1), ("solution", 0)):
        alone = tmp_path / f"alone-{learner}"
        graded = run_cli(
            "grade", str(roster / learner), "--course", course, "--out", str(alone), "-q",
            cwd=tmp_path,
        )  # fmt: skip
        assert graded.returncode == status, graded.stderr
        got = (batch / learner / "grader.log").read_text(encoding="utf-8")
        assert TIMING.sub("", got) == TIMING.sub("", (alone / "grader.log").read_text("utf-8"))
        assert "test session starts" in got.splitlines()[0]
        assert re.fullmatch(r"=+ .*passed in [0-9.]+s =+", got.splitlines()[-1])


def test_a_git_learners_log_names_their_commit_not_a_scratch_folder(toy_class, tmp_path: Path):
    """H42: the batch grades a git learner's commit exported into a scratch folder, removed
    after the run, and grader.log named that folder as the submission."""
    out = tmp_path / "out"
    grade_class_main(toy_class["roster"], out, deadline=DEADLINE)
    log = (out / "good" / "grader.log").read_text(encoding="utf-8")
    header = next(line for line in log.splitlines() if line.startswith("autograder: course"))
    assert f"; submission good at commit {toy_class['good_on_time']}; seed 0" in header
