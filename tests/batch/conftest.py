"""Shared builders for the batch tests: git repositories with commits at chosen times, the
toy-course class and a runner for the real command line."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "tests" / "framework" / "toy_course"
TOY_COURSE = TOY / "course.toml"
DEADLINE = "2026-08-15T23:59:00+05:30"
BEFORE = "2026-08-10T12:00:00+00:00"
AFTER = "2026-08-20T12:00:00+00:00"  # after the deadline
ON_TIME_EXACTLY = "2026-08-15T18:29:00+00:00"  # the deadline itself, in UTC
TIMING = ("duration_s", "graded_at")


def git(repo: Path, *args: str, when: str = BEFORE) -> str:
    """Run git in repo with a fixed identity and commit time, so commit ids are reproducible."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        "GIT_AUTHOR_NAME": "Learner",
        "GIT_AUTHOR_EMAIL": "learner@example.org",
        "GIT_COMMITTER_NAME": "Learner",
        "GIT_COMMITTER_EMAIL": "learner@example.org",
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def init_repo(repo: Path) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")


def commit_all(repo: Path, message: str, when: str) -> str:
    """Stage everything, commit at `when`, return the commit id."""
    git(repo, "add", "-A", when=when)
    git(repo, "commit", "-q", "-m", message, when=when)
    return git(repo, "rev-parse", "HEAD")


def copy_package(source: Path, repo: Path, package: str = "toypkg") -> None:
    target = repo / package
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source / package, target, ignore=shutil.ignore_patterns("__pycache__"))


def run_cli(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """`python -m autograder ARGS` in cwd."""
    return subprocess.run(
        [sys.executable, "-m", "autograder", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


SLOW_SCALE = '''"""Scaling, slowly: time for the test to look at (or stop) what grades it."""

import time

import numpy as np


def scale(x, factor):
    time.sleep(60)
    return np.asarray(x) * factor
'''


def start_slow_class(
    tmp_path: Path, learners: list[str], slow: list[str], *, jobs: int, **popen: object
) -> tuple[subprocess.Popen, Path]:
    """grade-class started (not waited for) on a class of the toy solution, one copy per id in
    ``learners``, whose scale() sleeps a minute for those in ``slow`` (the time-out is two):
    the running command and its DIR. ``popen``: more of Popen's arguments (stderr...)."""
    roster, out = tmp_path / "class", tmp_path / "out"
    for learner in learners:
        shutil.copytree(TOY / "solution" / "toypkg", roster / learner / "toypkg")
        if learner in slow:
            (roster / learner / "toypkg" / "scale.py").write_text(SLOW_SCALE)
    args = ["grade-class", str(roster), "--out", str(out), "--course", str(TOY_COURSE)]
    args += ["--timeout", "120", "-j", str(jobs), "-q"]
    command = [sys.executable, "-m", "autograder", *args]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, **popen)
    return process, out


KILL_WAIT = 300  # seconds to wait for a run to start grading before giving up


def wait_until_recorded(process: subprocess.Popen, out: Path, learner: str = "empty") -> None:
    """Wait while the grade-class `process` runs until `learner`'s record is in `out` (the
    learners go in id order, so the run is then grading the next one): the moment to kill it."""
    from autograder.gradebook import store

    deadline = time.monotonic() + KILL_WAIT
    while store.read_record(out, learner) is None and time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before it could be killed"
        time.sleep(0.1)


def read_gradebook(path: Path, *, drop_timing: bool = True) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    if drop_timing:
        for row in rows:
            for column in TIMING:
                row.pop(column)
    return rows


def gradebook_without_timing(path: Path) -> str:
    """The gradebook's text with the timing columns cut out (everything else byte for byte)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    assert header[-len(TIMING) :] == list(TIMING)
    return "".join(",".join(line.rstrip("\n").split(",")[: -len(TIMING)]) + "\n" for line in lines)


def report_without_timing(path: Path) -> str:
    """The class report's text with the minutes it was graded in cut out (report_model.GRADED_WHEN:
    two runs of the same class may straddle a minute)."""
    return re.sub(r"Graded .*? UTC", "Graded (when) UTC", path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def toy_class(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A toy-course class of git repositories (and two broken entries), built once. Only two
    learners are really graded, to keep the batch tests short.

    good      correct at the deadline; a later commit (after it) breaks scale.py
    mistake   one commit at the deadline exactly: the toy mistake and a changed visible test
    late      its only commit is after the deadline
    empty     an empty folder
    """
    base = tmp_path_factory.mktemp("toy_class")
    roster = base / "class"
    submissions = TOY / "submissions"
    good = roster / "good"
    init_repo(good)
    copy_package(TOY / "solution", good)
    on_time = commit_all(good, "softmax and scale done", BEFORE)
    copy_package(submissions / "mistake", good)
    broken = commit_all(good, "refactor after the deadline", AFTER)

    mistake = roster / "mistake"
    init_repo(mistake)
    copy_package(submissions / "mistake", mistake)
    tests = mistake / "tests" / "graders" / "visible"
    tests.mkdir(parents=True)
    (tests / "test_toy_scale.py").write_text("def test_everything_passes():\n    pass\n")
    commit_all(mistake, "done", ON_TIME_EXACTLY)

    late = roster / "late"
    init_repo(late)
    copy_package(TOY / "solution", late)
    commit_all(late, "done, late", AFTER)

    (roster / "empty").mkdir()
    manifest = base / "manifest.json"  # a release manifest protecting one visible test
    protected = "tests/graders/visible/test_toy_scale.py"
    digest = hashlib.sha256((TOY / protected).read_bytes()).hexdigest()
    manifest.write_text(json.dumps({"format": 1, "protected": {protected: digest}}))
    return {
        "roster": roster,
        "good_on_time": on_time,
        "good_broken": broken,
        "base": base,
        "manifest": manifest,
    }


def grade_class_main(roster: Path, out: Path, **options) -> int:
    """grade_class.main in this process on the toy course: one job, quiet, no deadline, unless
    `options` say otherwise."""
    from autograder.commands import grade_class

    settings = dict(
        course=TOY_COURSE,
        jobs=1,
        deadline=None,
        shard=None,
        force=False,
        test_timeout=None,
        seed=0,
        quiet=True,
    )
    return grade_class.main(roster_path=roster, out=out, **{**settings, **options})


needs_git_daemon = pytest.mark.skipif(
    subprocess.run(["git", "daemon", "-h"], capture_output=True).returncode != 129,
    reason="git daemon is not installed",
)  # `git daemon -h` prints its usage and exits with 129 when it exists


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def git_server(toy_class: dict, tmp_path_factory: pytest.TempPathFactory):
    """A git daemon on 127.0.0.1 serving every bare repository in a folder, `good.git` (a bare
    copy of the toy class's good learner) to begin with; yields (base URL, served folder). A
    test that changes what is served puts it back, or serves a repository of its own."""
    served = tmp_path_factory.mktemp("served")
    git(served, "clone", "-q", "--bare", str(toy_class["roster"] / "good"), "good.git")
    port = free_port()
    daemon = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={served}",
            str(served),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"git://127.0.0.1:{port}"
    try:
        for _ in range(100):  # until it answers
            probe = subprocess.run(["git", "ls-remote", f"{url}/good.git"], capture_output=True)
            if probe.returncode == 0:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the git daemon did not start")
        yield url, served
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)


def url_roster(tmp_path: Path, rows: dict[str, str]) -> Path:
    """A roster CSV in tmp_path: learner id to repository (a clone URL)."""
    path = tmp_path / "roster.csv"
    path.write_text("learner,repo\n" + "".join(f"{k},{v}\n" for k, v in rows.items()))
    return path
