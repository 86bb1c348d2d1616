"""The release's own `pytest`: only not-implemented failures on the stubs, all green with the
references copied in. The two runs go in parallel (one worker process each)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import JUnitXml

from .conftest import ROOT

NOT_IMPLEMENTED = "is not implemented yet"


def _copy(release_dir: Path, target: Path) -> Path:
    shutil.copytree(release_dir, target)
    return target


def _start(repo: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=junit.xml"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture(scope="module")
def runs(release_dir, tmp_path_factory):
    """(exit code, pytest output, junit report) for the stubs and for the references."""
    base = tmp_path_factory.mktemp("release_runs")
    stubs = _copy(release_dir, base / "stubs")
    solved = _copy(release_dir, base / "solved")
    for module in (ROOT / "solutions/t101").glob("*.py"):
        shutil.copy(module, solved / "assignments/t101" / module.name)
    processes = {"stubs": _start(stubs), "solved": _start(solved)}
    results = {}
    for name, process in processes.items():
        output, _ = process.communicate(timeout=1200)
        repo = base / name
        report = (
            JUnitXml.fromfile(str(repo / "junit.xml")) if (repo / "junit.xml").exists() else None
        )
        results[name] = (process.returncode, output, report)
    return results


def _cases(report):
    return [case for suite in report for case in suite]


def test_stubs_fail_only_with_not_implemented_messages(runs):
    code, output, report = runs["stubs"]
    assert code == 1, output[-3000:]
    cases = _cases(report)
    assert len(cases) > 20
    for case in cases:
        assert not case.is_passed, case.name
        messages = " ".join((r.message or "") + (r.text or "") for r in case.result)
        assert NOT_IMPLEMENTED in messages, f"{case.name}: {messages[:500]}"


def test_references_copied_in_pass_every_visible_test(runs):
    code, output, report = runs["solved"]
    assert code == 0, output[-3000:]
    cases = _cases(report)
    assert len(cases) == len(_cases(runs["stubs"][2]))
    assert all(case.is_passed for case in cases)


def test_a_learners_unusable_test_timeout_is_a_usage_error(release_dir):
    """`pytest --test-timeout inf` failed every test as the grader's own fault (OverflowError)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--test-timeout", "inf"],
        cwd=release_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    said = "--test-timeout must be a positive number of seconds, at most 3,600; got inf."
    assert said in done.stderr
