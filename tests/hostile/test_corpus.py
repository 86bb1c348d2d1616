"""Every hostile case graded by the real course graders through `autograder grade`.

The runs of cases.py are graded two at a time, each in its own `python -m autograder grade`
process with a canary secret in its environment, the visible graders, a 2 s budget per test and
only the components the run touches (plus a neighbour that must keep its points). Each case
then checks that:
- a results.json exists;
- the patched component lost its points (or kept them, for the harmless cases), the neighbours
  kept theirs, and one sentence says what happened;
- the run ended within the limits it was given, and nothing learner code started survived it;
- the canary appears in no report, log or terminal output.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.learner_text import first_sentence
from autograder.runtime.harness import isolation
from tests.hostile.cases import CASES, RUNS
from tests.hostile.corpus import MAX_TESTS_PER_COMPONENT, POINTS, ROOT, Run, build
from tests.hostile.corpus import leftover_processes as leftovers

pytestmark = pytest.mark.hostile

CANARY_NAME = "T101_GRADER_TOKEN"
TEST_TIMEOUT = 2.0
REPORTS = ("results.json", "summary.md", "junit.xml", "grader.log")
# course.toml [limits]: the bound a run must finish within is computed from them.
IMPORT_TIMEOUT, STARTUP_TIMEOUT = 20.0, 60.0
# Runs whose tests restart the worker again and again: started first, so two run side by side.
SLOW_RUNS = ("call_hangs", "crashes", "import_exits", "call_exits", "import_sleeps_and_sources")


@dataclass
class Graded:
    run: Run
    out: Path
    terminal: str
    returncode: int
    seconds: float
    results: dict
    bound: float


def _bound(run: Run) -> float:
    """The worst case the limits allow: every test times out and restarts the worker, every
    module import times out, plus a minute for pytest itself."""
    tests = MAX_TESTS_PER_COMPONENT * len(run.graded())
    return tests * (TEST_TIMEOUT + STARTUP_TIMEOUT) + 6 * IMPORT_TIMEOUT + 60


def _grade(run: Run, base: Path, marker: str, canary: str) -> Graded:
    out = base / run.name / "out"
    out.mkdir(parents=True)
    submission = build(run, base / run.name, marker=marker, out=out)
    command = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        str(submission),
        "--out",
        str(out),
        "--course",
        str(ROOT / "course.toml"),
        "--visible-only",
        "--timeout",
        str(TEST_TIMEOUT),
    ]
    for component in run.graded():
        command += ["--component", component]
    env = {**os.environ, CANARY_NAME: canary, "COLUMNS": "200"}
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=_bound(run))
    seconds = time.monotonic() - started
    terminal = (done.stdout + done.stderr).decode("utf-8", errors="replace")
    results_file = out / "results.json"
    results = json.loads(results_file.read_text()) if results_file.is_file() else {}
    return Graded(run, out, terminal, done.returncode, seconds, results, _bound(run))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("hostile")
    marker = f"{900 + random.randrange(99)}.{random.randrange(10**6):06d}"  # a `sleep` argument
    canary = f"canary-{random.randrange(16**12):012x}"
    with ThreadPoolExecutor(max_workers=2) as pool:
        slow_first = sorted(RUNS, key=lambda run: run.name not in SLOW_RUNS)
        jobs = {run.name: pool.submit(_grade, run, base, marker, canary) for run in slow_first}
        graded = {name: job.result() for name, job in jobs.items()}
    time.sleep(1.0)  # let the kernel finish killing the namespaces
    return {"graded": graded, "marker": marker, "canary": canary, "base": base}


def component_tests(graded: Graded, component: str) -> list[dict]:
    return [t for t in graded.results["tests"] if component in t.get("tags", [])]


def component_score(graded: Graded, component: str) -> float:
    return sum(t["score"] for t in component_tests(graded, component))


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_is_graded_with_the_right_score_and_sentence(corpus, name):
    run, case = CASES[name]
    graded = corpus["graded"][run.name]
    assert graded.results, f"no results.json for run {run.name}:\n{graded.terminal[-3000:]}"
    assert graded.returncode in (0, 1), graded.terminal[-3000:]
    assert graded.seconds < graded.bound
    tests = component_tests(graded, case.component)
    assert tests, f"no test of {case.component} ran in {run.name}"
    score = component_score(graded, case.component)
    if case.expect == "full":
        assert score == pytest.approx(POINTS[case.component])
    else:
        assert score == 0 if case.expect == "zero" else score < POINTS[case.component] - 1e-9
        first = next(t for t in tests if t["status"] == "failed")
        sentence = first_sentence(first["output"])  # what happened, in the learner's words
        assert case.phrase in first["output"].split("\n\n")[0], first["output"]
        assert len(sentence) > 20 and "Traceback" not in first["output"], first["output"]
    for neighbour in run.neighbours:
        assert component_score(graded, neighbour) == pytest.approx(POINTS[neighbour])


@pytest.mark.parametrize("run", [r.name for r in RUNS])
def test_no_report_log_or_terminal_shows_the_canary(corpus, run):
    graded = corpus["graded"][run]
    assert corpus["canary"] not in graded.terminal
    for name in REPORTS:
        path = graded.out / name
        if path.exists():
            assert corpus["canary"] not in path.read_text(errors="replace"), name


def test_nothing_learner_code_started_survives_the_runs(corpus):
    assert leftovers(corpus["marker"]) == []


def test_learner_code_cannot_overwrite_the_reports(corpus):
    graded = corpus["graded"]["floods_children_clobbering"]
    time.sleep(1.0)  # a surviving clobbering loop would rewrite results.json within 0.2 s
    results = json.loads((graded.out / "results.json").read_text())
    assert results["tests"] and results == graded.results
    assert sorted(p.name for p in graded.out.iterdir()) == sorted(REPORTS)


def test_an_output_flood_is_capped(corpus):
    graded = corpus["graded"]["floods_children_clobbering"]
    outputs = [t["output"] for t in component_tests(graded, "softmax")]
    assert any("flood" in o for o in outputs)
    assert all(len(o) < 20_000 for o in outputs)
    assert (graded.out / "results.json").stat().st_size < 2_000_000


def _outside_code_blocks(markdown: str) -> str:
    return re.sub(r"^\s*(`{3,})text\n.*?^\s*\1$", "", markdown, flags=re.M | re.S)


def _command_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith("::")]


def test_hostile_text_comes_out_neutralised(corpus):
    graded = corpus["graded"]["secrets_and_text"]
    summary = (graded.out / "summary.md").read_text()
    texts = {"summary.md": summary, "terminal": graded.terminal}
    texts["results.json"] = json.dumps(graded.results, ensure_ascii=False)
    texts["junit.xml"] = (graded.out / "junit.xml").read_text()
    for where, text in texts.items():
        assert "\x1b" not in text and "\x07" not in text, where
        assert not re.search("[\ud800-\udfff]", text), where  # UTF-8 cannot hold one
    assert _command_lines(graded.terminal) == []  # what a CI log would show
    prose = _outside_code_blocks(summary)
    assert "<script>" not in prose and "<img" not in prose and _command_lines(prose) == []
    assert "forged" in summary  # neutralised, not dropped: the learner still sees their message
    assert "forged \ufffd lone" in summary  # the lone surrogate: the replacement character


def test_summary_code_blocks_hold_no_workflow_command_lines(corpus):
    graded = corpus["graded"]["secrets_and_text"]
    assert _command_lines((graded.out / "summary.md").read_text()) == []


def test_the_references_and_hidden_tests_are_out_of_reach(corpus):
    level, _ = isolation.probe()
    if level == isolation.PROCESS_GROUP:
        pytest.skip("no namespaces here: the worker can read what the harness user can read")
    graded = corpus["graded"]["secrets_and_text"]
    assert component_score(graded, "add_norm") == 0


def test_a_skip_or_xfail_from_learner_code_is_a_failure(corpus):
    graded = corpus["graded"]["pytest_outcomes"]
    for component in ("softmax", "feed_forward", "add_norm"):
        tests = component_tests(graded, component)
        statuses = {t["status"] for t in tests}
        assert "failed" in statuses and statuses <= {"passed", "failed"}, (component, statuses)
        called = [t for t in tests if "raised" in t["output"]]
        assert called and all(t["status"] == "failed" and t["score"] == 0 for t in called)
