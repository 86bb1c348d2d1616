"""A local rehearsal of grade.yml: its grade step and its comment step, run as Actions would.

The learner repository is the release of the toy course (tests/framework/toy_course), so the
run is fast. The grade step's own `run` script (read from the generated grade.yml) runs under
bash with GITHUB_STEP_SUMMARY, GITHUB_OUTPUT and GITHUB_EVENT_PATH (a pull_request payload) set.
The submission is hostile: it prints workflow commands and raises one with a `%0A` escape; one
component is still a stub; one protected test file was edited. The log is then read the way the
runner reads it (honouring ::stop-commands::) to list the workflow commands that took effect.
"""

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.config import load_course
from autograder.github.actions_run import publish_grade
from autograder.github.summary import COMMENT_MARKER, PROTECTED_HEADING, hidden_not_run
from autograder.release.pipeline import build_release, write_release
from autograder.results import ComponentResult, GradeResult, TestResult
from autograder.results.pass_rule import PassRule

TOY = Path(__file__).resolve().parents[1] / "framework" / "toy_course"
HEAD_SHA = "0123456789abcdef0123456789abcdef01234567"
TAMPERED = "tests/graders/visible/test_toy_normalize.py"
HOSTILE_SCALE = '''"""A hostile learner: prints and raises fake workflow commands."""

import sys


def scale(x, factor):
    print("::error file=toypkg/scale.py,line=1::forged by the learner")
    print("::stop-commands::pwned")
    sys.stderr.write("##[error]legacy forged\\n")
    raise RuntimeError("::warning file=README.md,line=1::forged%0A::error::forged again")
'''
PYPROJECT = """[project]
name = "toy-release"
version = "0"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""


def _unescape(data: str) -> str:
    return data.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


def effective_commands(log: str) -> list[str]:
    """The workflow commands the runner would act on, honouring ::stop-commands::TOKEN."""
    commands, token = [], None
    for line in log.splitlines():
        stripped = line.strip()
        if token is not None:
            if stripped == f"::{token}::":
                token = None
            continue
        if stripped.startswith("::stop-commands::"):
            token = stripped.removeprefix("::stop-commands::")
        elif stripped.startswith(("::", "##[")):
            commands.append(stripped)
    return commands


def parse_command(command: str) -> tuple[str, dict[str, str], str]:
    head, message = command[2:].split("::", 1)
    name, _, props = head.partition(" ")
    fields = dict(p.split("=", 1) for p in props.split(",")) if props else {}
    return name, {k: _unescape(v) for k, v in fields.items()}, _unescape(message)


@pytest.fixture(scope="module")
def toy_release(tmp_path_factory):
    course_repo = tmp_path_factory.mktemp("toy") / "course"
    shutil.copytree(TOY, course_repo, ignore=shutil.ignore_patterns("__pycache__"))
    (course_repo / "pyproject.toml").write_text(PYPROJECT)
    out = tmp_path_factory.mktemp("toy_release") / "learner"
    config = load_course(course_repo / "course.toml")
    write_release(build_release(config, pass_rule=PassRule.parse("all")), out)
    return out


def _workflow(repo: Path) -> dict:
    return yaml.safe_load((repo / ".github/workflows/grade.yml").read_text())


def _bin(tmp: Path) -> Path:
    """A folder with an `autograder` that runs this interpreter's autograder."""
    folder = tmp / "bin"
    folder.mkdir()
    shim = folder / "autograder"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m autograder "$@"\n')
    shim.chmod(0o755)
    return folder


def run_grade_step(repo: Path, tmp: Path) -> dict:
    workflow = _workflow(repo)
    step = next(s for s in workflow["jobs"]["grade"]["steps"] if s.get("id") == "grade")
    event = tmp / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "head": {"sha": HEAD_SHA}}}))
    files = {name: tmp / name for name in ("summary.md", "output.txt")}
    for file in files.values():
        file.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTEST_"))}
    env.update(workflow["env"])
    env.update(
        HIDDEN_TESTS="false",
        PATH=f"{_bin(tmp)}{os.pathsep}{env['PATH']}",
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(files["summary.md"]),
        GITHUB_OUTPUT=str(files["output.txt"]),
        GITHUB_EVENT_PATH=str(event),
        GITHUB_EVENT_NAME="pull_request",
        GITHUB_SHA="f" * 40,
        GITHUB_SERVER_URL="https://github.com",
        GITHUB_REPOSITORY="learner/t101",
        GITHUB_RUN_ID="99",
    )
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    outputs = dict(
        line.split("=", 1) for line in files["output.txt"].read_text().splitlines() if line
    )
    return {
        "code": done.returncode,
        "log": done.stdout,
        "summary": files["summary.md"].read_text(),
        "outputs": outputs,
        "comment": (repo / "grades/comment.md").read_text(),
        "results": json.loads((repo / "grades/results.json").read_text()),
    }


@pytest.fixture(scope="module")
def hostile(toy_release, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    repo = tmp / "repo"
    shutil.copytree(toy_release, repo)
    (repo / "toypkg/scale.py").write_text(HOSTILE_SCALE)
    with (repo / TAMPERED).open("a") as stream:
        stream.write("# the learner was here\n")
    return run_grade_step(repo, tmp)


def test_hostile_run_fails_the_pass_rule(hostile):
    assert hostile["code"] == 1, hostile["log"]
    assert hostile["outputs"]["passed"] == "false"
    assert hostile["outputs"]["score"] == "0.00"
    assert hostile["outputs"]["hidden_included"] == "false"
    assert hostile["outputs"]["protected_changed"] == "1"


def test_only_our_annotations_take_effect(hostile):
    commands = [parse_command(c) for c in effective_commands(hostile["log"])]
    found = {(name, props.get("file"), props.get("line")) for name, props, _ in commands}
    assert found == {
        ("error", "toypkg/scale.py", "10"),  # the hostile file's raise, which its failure names
        ("error", "toypkg/normalize.py", "8"),  # the stub's raise NotImplementedError
        ("warning", TAMPERED, None),
    }
    for _, _props, message in commands:
        assert "\n" not in message and "\r" not in message  # %0A stayed literal
    scale = next(m for n, p, m in commands if p.get("file") == "toypkg/scale.py")
    assert "raised RuntimeError" in scale and "%0A" in scale


def test_no_learner_workflow_command_reaches_the_log(hostile):
    for line in hostile["log"].splitlines():
        stripped = line.strip()
        assert not (stripped.startswith(("::", "##[")) and "forged" in stripped.split("::")[1]), (
            line
        )
        assert "pwned" not in line


def test_summary_has_the_verdict_table_notes_and_tampering(hostile):
    summary = hostile["summary"]
    assert summary.startswith("## Toy Course: 0.00 / 15.00\n")
    assert "❌ Not passed yet: the pass rule asks for every test to pass." in summary
    assert hidden_not_run("Toy Course") in summary
    assert "**Toy Course / hidden tests**" in summary
    assert PROTECTED_HEADING in summary
    assert f"- {TAMPERED} was changed" in summary  # test_toy_normalize: no escape needed
    rows = [line for line in summary.splitlines() if line.startswith("| Scaling ")]
    assert len(rows) == 1
    assert rows[0].replace("\\|", "").count("|") == 5  # learner text cannot add a cell
    assert "<br>" not in rows[0] and "::warning" not in rows[0].split("|")[4].replace("\\", "")[:2]


def test_results_json_reports_the_protected_file(hostile):
    changed = hostile["results"]["extra_data"]["protected_files_changed"]
    assert [c["path"] for c in changed] == [TAMPERED]
    assert (
        changed[0]["sentence"] == f"{TAMPERED} was changed (its sha256 differs from the release's)."
    )


def test_comment_body_is_marked_with_the_pull_requests_head(hostile):
    body = hostile["comment"]
    assert body.startswith(COMMENT_MARKER + "\n") and body.count(COMMENT_MARKER) == 1
    assert f"Commit `{HEAD_SHA[:12]}`." in body
    assert "| Scaling | 0.00 / 10.00 |" in body and "| Normalizing | 0.00 / 5.00 |" in body
    assert "https://github.com/learner/t101/actions/runs/99" in body
    assert "@" not in body.replace("&#64;", "")


def test_a_full_score_publishes_no_annotation_and_passes(toy_release, tmp_path):
    """The passing path without another grading run: publish a full-marks result."""
    config = load_course(toy_release / "course.toml")
    components = [
        ComponentResult(c.name, c.title, c.points, c.points, 1, 1) for c in config.components
    ]
    tests = [TestResult(c.name, c.name, c.name, status="passed") for c in config.components]
    result = GradeResult("repo", "Toy Course", tests, components, 15.0, 15.0, False, 0)
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    log = io.StringIO()
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)}
    passed = publish_grade(
        config,
        result,
        package_dir=toy_release / "toypkg",
        out_dir=tmp_path,
        rule=PassRule.parse("all"),
        changes=[],
        stream=log,
        env=env,
    )
    assert passed and log.getvalue() == ""
    assert "passed=true\n" in output.read_text() and "score=15.00\n" in output.read_text()
    assert "✅ Passed: every test passed." in summary.read_text()
    assert (tmp_path / "comment.md").read_text().startswith(COMMENT_MARKER)


BODY = "-F body=@grade-results/comment.md"
FAKE_GH = """#!/bin/sh
echo "$@" >> "$GH_CALLS"
case "$*" in *--jq*) printf '%s' "$FAKE_IDS" ;; esac
"""


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        (
            "",
            "api --method POST repos/learner/t101/issues/7/comments " + BODY,
        ),
        (
            "42\n43\n",
            "api --method PATCH repos/learner/t101/issues/comments/42 " + BODY,
        ),
    ],
)
def test_comment_step_creates_one_comment_then_edits_it(toy_release, tmp_path, existing, expected):
    step = _workflow(toy_release)["jobs"]["comment"]["steps"][-1]
    (tmp_path / "grade-results").mkdir()
    (tmp_path / "grade-results/comment.md").write_text(COMMENT_MARKER + "\nbody\n")
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "gh").write_text(FAKE_GH)
    (folder / "gh").chmod(0o755)
    env = dict(os.environ, PATH=f"{folder}{os.pathsep}{os.environ['PATH']}")
    env.update({k: str(v) for k, v in step["env"].items()})
    env.update(
        GH_CALLS=str(tmp_path / "calls"),
        FAKE_IDS=existing,
        REPOSITORY="learner/t101",
        PULL_REQUEST="7",
    )
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, text=True)
    assert done.returncode == 0
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[0].startswith("api --paginate repos/learner/t101/issues/7/comments --jq")
    assert calls[1:] == [expected]
