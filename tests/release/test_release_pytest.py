"""The release's own `pytest`: only not-implemented failures on the stubs, all green with the
references copied in. The two runs go in parallel (one worker process each)."""

import json
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


FIX_SOFTMAX = "Fix Softmax first: this part builds on it, and its own tests fail."


def test_without_stand_ins_a_broken_softmax_is_noted_only_where_it_runs(release_dir, tmp_path):
    """A learner's repository has no stand-ins: the attention's visible tests run the learner's
    own softmax. Broken, it is named as the part to fix first in the tests that call it, never in
    cosine_similarity's (which calls none), whose own mistake is told alone."""
    repo = _copy(release_dir, tmp_path / "repo")
    for module in (ROOT / "solutions/t101").glob("*.py"):
        shutil.copy(module, repo / "assignments/t101" / module.name)
    package = repo / "assignments/t101"
    softmax = (package / "softmax.py").read_text()
    shift = "m = np.max(x, axis=axis, keepdims=True)"
    assert softmax.count(shift) == 1
    (package / "softmax.py").write_text(softmax.replace(shift, f"{shift} * 0 + 1000.0"))
    attention = (package / "attention.py").read_text()
    cosine = "return float(np.clip(a @ b / (norm_a * norm_b), -1.0, 1.0))"
    assert attention.count(cosine) == 1
    (package / "attention.py").write_text(attention.replace(cosine, "return float(a @ b)"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", ".", "--out", "grades", "--quiet"]
        + ["--component", "softmax", "--component", "attention"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr
    tests = json.loads((repo / "grades/results.json").read_text())["tests"]
    failed = {
        t["name"]: t["output"]
        for t in tests
        if t["tags"] == ["attention"] and t["status"] != "passed"
    }
    cosine_tests = [name for name in failed if "cosine_similarity" in name]
    assert cosine_tests
    for name in cosine_tests:
        assert FIX_SOFTMAX not in failed[name], name
    calling = [name for name in failed if name not in cosine_tests]
    assert len(calling) >= 5
    for name in calling:
        assert failed[name].endswith(FIX_SOFTMAX), name
