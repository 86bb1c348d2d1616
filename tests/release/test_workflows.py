"""grade.yml (generated) and ci.yml: their shape, and actionlint and zizmor over both."""

import re
import shutil
import subprocess

import pytest
import yaml

from autograder.github.summary import COMMENT_MARKER
from autograder.release.steps import TORCH_VERSION

from .conftest import ROOT

CI = ROOT / ".github/workflows/ci.yml"
HIDDEN = ROOT / ".github/workflows/hidden-grading.yml"
REGRADE = ROOT / ".github/workflows/regrade.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


@pytest.fixture(scope="module")
def grade_yml(release_dir):
    return release_dir / ".github/workflows/grade.yml"


@pytest.fixture(scope="module")
def workflow(grade_yml):
    return yaml.safe_load(grade_yml.read_text())


def _steps(workflow):
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def test_triggers_permissions_and_concurrency(workflow):
    assert set(workflow[True]) == {"push", "pull_request", "workflow_dispatch"}  # `on:`
    assert workflow["permissions"] == {"contents": "read"}
    assert workflow["concurrency"]["group"] == "grade-${{ github.ref }}"
    assert workflow["concurrency"]["cancel-in-progress"] is True
    assert "permissions" not in workflow["jobs"]["grade"]
    assert workflow["jobs"]["comment"]["permissions"] == {"pull-requests": "write"}


@pytest.mark.parametrize("path", ["release", "ci", "hidden", "regrade"])
def test_every_action_is_pinned_by_commit_and_checkout_keeps_no_token(path, grade_yml):
    files = {"release": grade_yml, "ci": CI, "hidden": HIDDEN, "regrade": REGRADE}
    text = files[path].read_text()
    data = yaml.safe_load(text)
    for step in _steps(data):
        if "uses" in step:
            assert PINNED.match(step["uses"]), step["uses"]
            if step["uses"].startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False
    assert "${{" not in "".join(step.get("run", "") for step in _steps(data))


def test_torch_is_a_cpu_build_and_pip_is_cached(workflow):
    steps = workflow["jobs"]["grade"]["steps"]
    install = next(s for s in steps if s.get("name", "").startswith("Install"))["run"]
    assert f'"torch=={TORCH_VERSION}" --index-url https://download.pytorch.org/whl/cpu' in install
    assert install.index("torch==") < install.index("pip install .")
    setup = [s for s in steps if s.get("uses", "").startswith("actions/setup-python@")][0]
    assert setup["with"]["cache"] == "pip"


def test_grade_step_runs_the_visible_tests_and_holds_no_secret(workflow, grade_yml):
    job = workflow["jobs"]["grade"]
    run = next(s for s in job["steps"] if s.get("id") == "grade")["run"]
    assert "--course course.toml --visible-only" in run
    assert "--github" in run and '--manifest "$MANIFEST"' in run
    assert "secrets." not in grade_yml.read_text()  # nothing a learner could read out of it
    assert "vars." not in grade_yml.read_text()
    checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    assert len(checkouts) == 1 and "repository" not in checkouts[0]["with"]
    assert "Transformers 101 / hidden tests" in grade_yml.read_text()  # where that score is
    upload = next(s for s in job["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["if"] == "always()" and upload["with"]["path"] == "grades/"


def test_comment_job_edits_one_marked_comment(workflow):
    job = workflow["jobs"]["comment"]
    assert "github.event_name == 'pull_request'" in job["if"] and "always()" in job["if"]
    post = job["steps"][-1]
    assert post["env"]["MARKER"] == COMMENT_MARKER
    assert "--method PATCH" in post["run"] and "--method POST" in post["run"]


def _tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return path


def test_actionlint_accepts_every_workflow(grade_yml):
    tool = _tool("actionlint")
    files = [str(CI), str(HIDDEN), str(REGRADE), str(grade_yml)]
    done = subprocess.run([tool, *files], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_finds_nothing_in_any_workflow(grade_yml):
    tool = _tool("zizmor")
    done = subprocess.run(
        [tool, "--offline", str(CI.parent), str(grade_yml)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings" in done.stdout + done.stderr


def test_hidden_grading_runs_on_a_schedule_and_writes_only_its_gradebook_branch():
    data = yaml.safe_load(HIDDEN.read_text())
    assert set(data[True]) == {"schedule", "workflow_dispatch"}  # `on:`
    assert data["permissions"] == {"contents": "read"}
    assert data["concurrency"] == {"group": "hidden-grading", "cancel-in-progress": False}
    jobs = data["jobs"]
    assert [name for name, job in jobs.items() if "permissions" in job] == ["publish"]
    assert jobs["publish"]["permissions"] == {"contents": "write"}
    grade = next(s for s in jobs["grade"]["steps"] if "grade-class" in s.get("run", ""))["run"]
    assert "--regrade-moved" in grade and '--shard "$SHARD/$SHARDS"' in grade
    publish = next(s for s in jobs["publish"]["steps"] if s.get("id") == "publish")
    assert publish["env"]["GH_TOKEN"] == "${{ secrets.ROSTER_TOKEN }}"
    assert "--statuses" in publish["run"]


LIFT_USERNS = "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"


@pytest.mark.parametrize("path", [HIDDEN, REGRADE], ids=["hidden", "regrade"])
def test_the_instructors_grading_confines_learner_code_and_holds_no_publishing_token(path):
    steps = yaml.safe_load(path.read_text())["jobs"]["grade"]["steps"]
    runs = [step.get("run", "") for step in steps]
    grading = next(i for i, run in enumerate(runs) if "grade-class" in run)
    lifted = [i for i, run in enumerate(runs) if LIFT_USERNS in run]
    # user namespaces before grade-class, which in CI refuses the process-group level
    assert lifted and lifted[0] < grading
    assert "--allow-unconfined" not in path.read_text()
    # what publishes (statuses, the gradebook branch) is never where learner code runs
    env = steps[grading].get("env", {})
    assert not {"GH_TOKEN", "GITHUB_TOKEN", "GRADEBOOK_TOKEN"} & set(env)
    assert "github.token" not in str(env)
    assert [value for value in env.values() if "secrets." in value] == [
        "${{ secrets.ROSTER_TOKEN }}"
    ]  # git reads it for clone URLs; out of reach of the confined workers


def test_the_projects_own_suite_runs_where_learner_code_is_confined():
    steps = yaml.safe_load(CI.read_text())["jobs"]["test"]["steps"]
    runs = [step.get("run", "") for step in steps]
    suite = runs.index("python -m pytest")
    assert any(LIFT_USERNS in run for run in runs[:suite])
