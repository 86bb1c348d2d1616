"""`autograder grade` end to end on the toy course, through the real CLI.

One CliRunner run grades a class of four toy submissions (stub, solution, a mistake, a
forbidden call) and the tests below read its reports; one subprocess run checks the installed
`python -m autograder` path. The remaining runs fail before any worker starts, so they are fast.
"""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from junitparser import JUnitXml

import autograder
from autograder import __version__
from autograder.cli import cli
from autograder.commands import grade as command
from autograder.config import BAD_TIMEOUT, SUBMISSION_MISSING, load_course
from autograder.feedback import FIRST_DIFFERENCE, KNOWN_MISTAKE
from autograder.grading.graders_session import COLLECT_ERROR
from autograder.pytest_plugin import seed_for
from autograder.results import FORBIDDEN_AT
from autograder.runtime.harness import isolation

TOY = Path(__file__).parent / "toy_course"
COURSE = TOY / "course.toml"
SUBMISSIONS = {
    "toy_course": TOY,  # the course root is the release: stubs that raise NotImplementedError
    "solution": TOY / "solution",
    "mistake": TOY / "submissions" / "mistake",
    "forbidden": TOY / "submissions" / "forbidden" / "toypkg",  # a package folder works too
}


@pytest.fixture(scope="module")
def config():
    return load_course(COURSE)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("grades")
    args = ["grade", *map(str, SUBMISSIONS.values()), "--out", str(out), "--course", str(COURSE)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return result, out


def report(graded, name):
    return json.loads((graded[1] / name / "results.json").read_text(encoding="utf-8"))


def test_a_class_run_exits_1_and_writes_every_report(graded):
    result, out = graded
    assert result.exit_code == 1, result.output
    for name in SUBMISSIONS:
        for file in ("results.json", "summary.md", "junit.xml", "grader.log"):
            assert (out / name / file).is_file(), (name, file)
    assert "Class overview" in result.stdout
    assert all(name in result.stdout for name in SUBMISSIONS)


def test_the_solution_gets_full_marks(graded):
    document = report(graded, "solution")
    assert (document["score"], document["max_score"]) == (15.0, 15.0)
    assert [t["status"] for t in document["tests"]] == ["passed"] * 6


def test_the_stub_scores_zero_with_a_not_implemented_sentence_per_component(graded, config):
    document = report(graded, "toy_course")
    assert document["score"] == 0.0
    assert all(t["status"] == "failed" for t in document["tests"])
    for component in config.components:
        own = [t for t in document["tests"] if t["tags"] == [component.name]]
        assert own and all("not implemented" in t["output"] for t in own)
        # A visible test says where; a hidden one takes no text from the worker (a forged line
        # could carry a hidden input): it names the call and the module's file, never a line.
        visible = [t for t in own if t["visibility"] == "visible"]
        hidden = [t for t in own if t["visibility"] != "visible"]
        assert visible and all(f"{component.module}.py:" in t["output"] for t in visible)
        assert hidden and all(f"/{component.module}.py. " in t["output"] for t in hidden)
        assert all(f"The call {component.module}(...)" in t["output"] for t in hidden)
    summary = (graded[1] / "toy_course" / "summary.md").read_text(encoding="utf-8")
    assert "| Scaling | 0.00 / 10.00 | 0 / 3 |" in summary


def test_a_mistake_loses_only_its_component_and_is_named(graded):
    document = report(graded, "mistake")
    scores = {}
    for test in document["tests"]:
        scores.setdefault(test["tags"][0], []).append(test["score"])
    assert sum(scores["normalize"]) == 5.0
    assert sum(scores["scale"]) == 5.0  # the rejects-nan test (weight 2 of 4) still passes
    values = next(t for t in document["tests"] if t["name"].endswith("multiplies every entry by 3"))
    assert values["output"].startswith(
        KNOWN_MISTAKE.format(
            what="scale(x, 3.0)", mistake="It adds the factor instead of multiplying by it."
        )
    )
    assert "Your code printed:\ndebug | <b>scaling</b> `x`" in values["output"]


def test_hidden_messages_carry_no_values(graded):
    document = report(graded, "mistake")
    (hidden,) = [t for t in document["tests"] if t["name"].endswith("with a negative factor")]
    assert hidden["visibility"] == "after_published"
    assert hidden["status"] == "failed"
    message = hidden["output"]
    assert "differs from the expected values: all of its entries differ" in message
    assert FIRST_DIFFERENCE.split("{")[0] not in message
    assert "printed" not in message
    # Rebuild the hidden inputs: no input, expected or returned value appears in the message.
    key = "tests/graders/hidden/test_toy_hidden.py::test_scale_batch"
    x = np.random.default_rng(seed_for(0, key)).normal(size=(4, 2, 3))
    values = np.concatenate([x.ravel(), (-1.5 * x).ravel(), (x - 1.5).ravel()])
    for number in re.findall(r"-?\d+\.\d+", message):
        assert not np.isclose(values, float(number), atol=5e-3).any(), number


def test_a_forbidden_call_zeroes_its_component(graded, config):
    document = report(graded, "forbidden")
    sentence = FORBIDDEN_AT.format(
        sentence=config.forbidden.sentence("numpy.linalg.norm"), file="toypkg/normalize.py", line=7
    )
    assert document["score"] == 10.0
    normalize = [t for t in document["tests"] if t["tags"] == ["normalize"]]
    assert all(t["score"] == 0 and t["output"].startswith(sentence) for t in normalize)
    assert document["extra_data"]["forbidden"] == [
        {
            "api": "numpy.linalg.norm",
            "file": "normalize.py",
            "line": 7,
            "component": "normalize",
            "sentence": sentence,
        }
    ]


def test_results_json_follows_the_gradescope_schema(graded):
    document = report(graded, "mistake")
    assert {"score", "max_score", "output", "tests", "extra_data"} <= set(document)
    numbers = [t["number"] for t in document["tests"]]
    assert numbers == ["1.1", "1.2", "1.3", "2.1", "2.2", "2.3"]
    for test in document["tests"]:
        assert set(test) == {
            "name",
            "score",
            "max_score",
            "status",
            "output",
            "visibility",
            "tags",
            "number",
        }
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in ("visible", "after_published")
        assert 0 <= test["score"] <= test["max_score"]
    assert sum(t["max_score"] for t in document["tests"]) == pytest.approx(15.0)
    assert sum(t["score"] for t in document["tests"]) == pytest.approx(document["score"])
    extra = document["extra_data"]
    assert (extra["submission"], extra["seed"], extra["hidden_included"]) == ("mistake", 0, True)
    assert extra["grader_errors"] == []


def test_summary_md_neutralises_learner_output(graded):
    summary = (graded[1] / "mistake" / "summary.md").read_text(encoding="utf-8")
    assert "**Total: 10.00 / 15.00**" in summary
    assert "\x1b" not in summary
    assert "```text\n  debug | <b>scaling</b> `x`\n  ```" in summary  # fenced, never rendered


def test_grader_log_says_how_learner_code_was_confined(graded, config):
    """The report header names the confinement in force, and says so when there is none."""
    log = (graded[1] / "solution" / "grader.log").read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(log) if line.startswith("autograder: course"))
    assert log[header + 1] == isolation.header_line(config.limits.disk_mb)
    assert log[header + 1].startswith("autograder: learner code runs ")


def test_junit_xml_parses(graded):
    document = JUnitXml.fromfile(str(graded[1] / "mistake" / "junit.xml"))
    suites = {suite.name: suite for suite in document}
    assert set(suites) == {"scale", "normalize"}
    assert (suites["scale"].tests, suites["scale"].failures) == (3, 2)
    assert (suites["normalize"].tests, suites["normalize"].failures) == (3, 0)


def test_the_installed_command_grades_visible_tests_only(tmp_path):
    """A real subprocess: `python -m autograder grade`, as a learner would run it."""
    out = tmp_path / "mine"
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", "solution", "--visible-only"]
        + ["--out", str(out), "--seed", "3"],
        cwd=TOY,  # the course file is found from the current folder
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert completed.returncode == 0, completed.stderr
    assert "15.00 / 15.00" in completed.stdout
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert document["extra_data"]["hidden_included"] is False
    assert document["extra_data"]["seed"] == 3
    assert {t["visibility"] for t in document["tests"]} == {"visible"}
    assert len(document["tests"]) == 4
    assert document["score"] == 15.0  # each component's points spread over its visible tests


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_a_broken_course_file_exits_2_with_a_sentence(tmp_path):
    bad = tmp_path / "course.toml"
    bad.write_text(COURSE.read_text().replace("points = 5", "points = -5"))
    result = invoke("grade", str(TOY / "solution"), "--course", str(bad), "--out", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f'{bad.resolve()}: points of component "normalize" must be a number greater than 0; got -5.'
    )
    assert "Traceback" not in result.output
    assert not (tmp_path / "results.json").exists()


def test_a_missing_submission_exits_2_and_leaves_no_stale_grade(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("{}")  # from an earlier run
    missing = tmp_path / "nobody"
    result = invoke("grade", str(missing), "--course", str(COURSE), "--out", str(out))
    assert result.exit_code == 2
    reason = SUBMISSION_MISSING.format(path=missing)
    assert result.stderr.strip() == command.NOT_GRADED.format(name="nobody", reason=reason)
    assert not (out / "results.json").exists()


def test_graders_that_fail_to_collect_exit_2(tmp_path, monkeypatch):
    course = tmp_path / "course.toml"
    text = COURSE.read_text().replace('reference_dir = "solution/toypkg"\n', "")
    course.write_text(text.replace('hidden_tests = "tests/graders/hidden"\n', ""))
    (tmp_path / "toypkg").mkdir()
    visible = tmp_path / "tests" / "graders" / "visible"
    visible.mkdir(parents=True)
    (visible / "test_broken_grader.py").write_text("def test_(:\n")
    monkeypatch.chdir(tmp_path)
    result = invoke("grade", str(tmp_path), "--course", str(course), "--quiet")
    assert result.exit_code == 2
    assert result.stdout == ""
    sentence = result.stderr.strip()
    assert sentence.startswith(
        command.NOT_GRADED.format(
            name=tmp_path.name,
            reason=COLLECT_ERROR.format(
                where="tests/graders/visible/test_broken_grader.py", detail=""
            ),
        )
    )
    assert "SyntaxError" in sentence
    out = tmp_path / "grades" / tmp_path.name  # the default: ./grades/<submission name>
    assert (out / "grader.log").is_file()
    assert not (out / "results.json").exists()


def test_two_submissions_with_one_name_are_refused(tmp_path):
    for parent in ("a", "b"):
        (tmp_path / parent / "same" / "toypkg").mkdir(parents=True)
    result = invoke(
        "grade", str(tmp_path / "a" / "same"), str(tmp_path / "b" / "same"), "--course", str(COURSE)
    )
    assert result.exit_code == 2
    assert "Two submissions are both named same" in result.stderr


@pytest.mark.parametrize(
    "value, got", [("0", 0.0), ("inf", math.inf), ("nan", math.nan), ("1e9", 1e9)]
)
def test_a_timeout_that_is_not_a_positive_bounded_number_is_refused(value, got):
    """--timeout inf graded every test as 'the grader itself failed' (OverflowError)."""
    result = invoke("grade", str(TOY), "--course", str(COURSE), "--timeout", value)
    assert result.exit_code == 2
    assert result.stderr.strip() == BAD_TIMEOUT.format(value=got, most=3600)


def test_version_and_help():
    assert invoke("--version").output.strip() == f"autograder, version {__version__}"
    text = invoke("grade", "--help").output
    for option in ("--out", "--course", "--visible-only", "--timeout", "--seed", "--quiet"):
        assert option in text
    assert "Exit status: 0 when every test passed" in " ".join(text.split())


def test_the_public_surface_is_small_sorted_and_importable():
    assert autograder.__all__ == sorted(autograder.__all__)
    assert len(autograder.__all__) == len(set(autograder.__all__))
    for name in autograder.__all__:
        assert getattr(autograder, name) is not None
