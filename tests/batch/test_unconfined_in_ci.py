"""grade-class never grades a class unconfined in CI unless told, and says so once elsewhere.

The machine is made to allow only the process-group level as a GitHub ubuntu-24.04 runner
does (AppArmor refuses the grader's user namespaces): an `unshare` that fails comes first on
PATH, so that isolation.probe() finds neither namespaces nor user namespaces."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.commands.unconfined_grading import REFUSED_IN_CI, UNCONFINED_NOTE, check, in_ci
from autograder.runtime.harness.isolation import NAMESPACES, PROCESS_GROUP, USER_NAMESPACES

from .conftest import TOY, TOY_COURSE

FAILING_UNSHARE = """#!/bin/sh
echo "unshare: write failed /proc/self/uid_map: Operation not permitted" >&2
exit 1
"""
CI_NAMES = ("CI", "GITHUB_ACTIONS")


def _grade_class(tmp_path: Path, *extra: str, **env: str) -> subprocess.CompletedProcess:
    """grade-class of a one-learner toy class into tmp_path/out, on a process-group machine."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "unshare").write_text(FAILING_UNSHARE)
    (fake / "unshare").chmod(0o755)
    roster = tmp_path / "class"
    if not roster.exists():
        shutil.copytree(TOY / "solution" / "toypkg", roster / "solo" / "toypkg")
    full = {k: v for k, v in os.environ.items() if k not in CI_NAMES}
    full.update(env, PATH=f"{fake}{os.pathsep}{os.environ['PATH']}")
    args = [str(roster), "--out", str(tmp_path / "out"), "--course", str(TOY_COURSE), "-j", "1"]
    return subprocess.run(
        [sys.executable, "-m", "autograder", "grade-class", *args, "-q", *extra],
        cwd=tmp_path,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("name", CI_NAMES)
def test_a_ci_run_at_process_group_is_refused_before_out_is_touched(tmp_path, name) -> None:
    done = _grade_class(tmp_path, **{name: "true"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == REFUSED_IN_CI
    assert not (tmp_path / "out").exists()


def test_allow_unconfined_grades_in_ci_and_says_it_once(tmp_path) -> None:
    done = _grade_class(tmp_path, "--allow-unconfined", GITHUB_ACTIONS="true")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(UNCONFINED_NOTE) == 1
    assert (tmp_path / "out" / "solo" / "record.json").is_file()


def test_outside_ci_grading_at_process_group_says_so_once_on_stderr(tmp_path) -> None:
    done = _grade_class(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(UNCONFINED_NOTE) == 1
    assert "process-group" in UNCONFINED_NOTE


def test_the_refusal_names_the_level_why_and_both_fixes() -> None:
    assert "process-group" in REFUSED_IN_CI and "secret" in REFUSED_IN_CI
    assert "sudo" in REFUSED_IN_CI
    assert "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in REFUSED_IN_CI
    assert "--allow-unconfined" in REFUSED_IN_CI


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"GITHUB_ACTIONS": "true"}, True),
        ({"CI": "true"}, True),
        ({"CI": "1"}, True),
        ({"CI": "false"}, False),
        ({"GITHUB_ACTIONS": ""}, False),
        ({}, False),
    ],
)
def test_in_ci_reads_github_actions_and_ci(env, expected) -> None:
    assert in_ci(env) is expected


@pytest.mark.parametrize("level", [NAMESPACES, USER_NAMESPACES])
def test_a_confined_level_is_neither_refused_nor_noted_in_ci(level) -> None:
    assert check({"GITHUB_ACTIONS": "true"}, allowed=False, level=level) == ("", "")


def test_process_group_is_refused_in_ci_and_noted_elsewhere() -> None:
    assert check({"CI": "true"}, allowed=False, level=PROCESS_GROUP) == (REFUSED_IN_CI, "")
    assert check({"CI": "true"}, allowed=True, level=PROCESS_GROUP) == ("", UNCONFINED_NOTE)
    assert check({}, allowed=False, level=PROCESS_GROUP) == ("", UNCONFINED_NOTE)
