"""The scheduled hidden grading, end to end: .github/workflows/hidden-grading.yml run locally,
step by step as the runner runs it (workflow_runner.Rehearsal), on four learners of the example
class as local git repositories with a `github` owner/name column, statuses sent to a
recording server on 127.0.0.1 (GITHUB_API_URL).

Run 1 grades everyone on two shards and sends one status each; ben and dara then push (dara
fixes her attention); run 2 grades only those two and sends their two statuses; run 3 finds
nothing new and stops after the plan. The gradebook lives on the branch between runs.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.gradebook import store

from .conftest import ROOT, TOKEN
from .recording_server import Answer, RecordingServer
from .workflow_runner import Rehearsal

WORKFLOW = ROOT / ".github/workflows/hidden-grading.yml"
CLASS = ROOT / "examples" / "submissions"
LEARNERS = ("amara", "ben", "dara", "elif")
BRANCH = "autograder-gradebook"
CONTEXT = "Transformers 101 / hidden tests"


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "Learner",
        "GIT_AUTHOR_EMAIL": "learner@example.org",
        "GIT_COMMITTER_NAME": "Learner",
        "GIT_COMMITTER_EMAIL": "learner@example.org",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env, check=True)  # fmt: skip
    return done.stdout.strip()


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The learners' repositories, the instructor's repository (its roster) and its copy on
    'GitHub' (a bare repository the workflow's checkouts clone and the gradebook goes to)."""
    base = tmp_path_factory.mktemp("hidden")
    heads = {}
    for name in LEARNERS:
        repo = base / "learners" / name
        shutil.copytree(CLASS / name, repo)
        git(repo, "init", "-q", "-b", "main")
        heads[name] = commit(repo, "my work")
    instructor, origin = base / "instructor", base / "instructor.git"
    instructor.mkdir()
    with (instructor / "roster.csv").open("w", newline="") as stream:
        rows = csv.writer(stream, lineterminator="\n")
        rows.writerow(["learner", "repo", "github"])
        for name in LEARNERS:
            rows.writerow([name, base / "learners" / name, f"org/t101-{name}"])
    git(instructor, "init", "-q", "-b", "main")
    commit(instructor, "the roster")
    git(base, "clone", "-q", "--bare", str(instructor), str(origin))
    return {"base": base, "origin": origin, "heads": heads}


def scheduled_run(course, server: RecordingServer, run_id: int, root: Path) -> dict:
    """One scheduled run: plan, each shard, publish, as the workflow's conditions choose."""
    for name in LEARNERS:
        path = f"/repos/org/t101-{name}/statuses/{course['heads'][name]}"
        server.answer("POST", path, Answer(201, {"id": run_id}))
    env = {
        "GITHUB_API_URL": server.url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "org/t101-instructor",
        "GITHUB_RUN_ID": str(run_id),
    }
    rehearsal = Rehearsal(WORKFLOW, course["origin"], root, env)
    values = {
        "${{ vars.T101_ROSTER }}": "roster.csv",
        "${{ vars.T101_COURSE || 'course.toml' }}": str(ROOT / "course.toml"),
        "${{ secrets.ROSTER_TOKEN }}": TOKEN,
        "${{ github.token }}": "ghs_local_run_token",
        "${{ inputs.regrade_all }}": "",
        "${{ vars.T101_MANIFEST }}": "",
        "${{ vars.T101_DEADLINE }}": "",
        "${{ vars.T101_COMMENT }}": "",
        "${{ vars.T101_PER_SHARD || '25' }}": "2",
    }
    plan = rehearsal.run_job("plan", values, {})["plan"]
    graded = plan["grade"] != "0"
    shards = int(plan["shard_count"])
    for shard in range(1, shards + 1):
        shard_values = {
            **values,
            "${{ matrix.shard }}": str(shard),
            "${{ needs.plan.outputs.shard_count }}": str(shards),
        }
        rehearsal.run_job("grade", shard_values, {"${{ !cancelled() }}": True})
    published = None
    if graded or plan["publish"] != "0":
        conditions = {
            "${{ needs.grade.result == 'success' }}": graded,
            "${{ steps.publish.outputs.status == '1' }}": lambda steps: (
                steps["publish"]["status"] == "1"
            ),
        }
        steps = rehearsal.run_job("publish", values, conditions)
        published = steps["publish"]["status"]
        assert published == "0", "\n".join(rehearsal.logs)
    return {"plan": plan, "rehearsal": rehearsal, "published": published}


@pytest.fixture(scope="module")
def runs(course, tmp_path_factory):
    root = tmp_path_factory.mktemp("runner")
    with RecordingServer() as server:
        first = scheduled_run(course, server, 1, root)
        first_requests = list(server.requests)
        gradebook = root / "work" / "repo" / "gradebook"
        rows_1 = {r.learner: r for r in store.read_records(gradebook)}
        # ben pushes a note; dara fixes her attention with the reference's
        (course["base"] / "learners/ben/NOTES.md").write_text("still working\n")
        course["heads"]["ben"] = commit(course["base"] / "learners/ben", "notes")
        shutil.copy(
            ROOT / "solutions/t101/attention.py",
            course["base"] / "learners/dara/assignments/t101/attention.py",
        )
        course["heads"]["dara"] = commit(course["base"] / "learners/dara", "fix the axis")
        second = scheduled_run(course, server, 2, root)
        second_requests = server.requests[len(first_requests) :]
        rows_2 = {r.learner: r for r in store.read_records(gradebook)}
        third = scheduled_run(course, server, 3, root)
        third_requests = server.requests[len(first_requests) + len(second_requests) :]
    return {
        "first": first,
        "second": second,
        "third": third,
        "requests": (first_requests, second_requests, third_requests),
        "rows": (rows_1, rows_2),
        "origin": course["origin"],
        "heads": course["heads"],
    }


def _statuses(requests) -> dict[str, dict]:
    return {r.path: r.body for r in requests if r.method == "POST"}


def test_the_first_run_grades_everyone_on_two_shards_and_sends_one_status_each(runs):
    plan = runs["first"]["plan"]
    assert (plan["grade"], plan["shard_count"], plan["shards"]) == ("4", "2", "[1, 2]")
    first, _, _ = runs["requests"]
    rows, _ = runs["rows"]
    assert sorted(rows) == list(LEARNERS)
    sent = _statuses(first)
    assert len(first) == 4 and len(sent) == 4
    expected = {
        "amara": ("success", "100.00 / 100.00 points with the hidden tests: passed"),
        "ben": ("failure", "0.00 / 100.00 points with the hidden tests: not passed yet (every "
                "test must pass)"),
        "dara": ("failure", None),
        "elif": ("failure", None),
    }  # fmt: skip
    for name, (state, description) in expected.items():
        body = sent[f"/repos/org/t101-{name}/statuses/{rows[name].commit}"]
        assert body["state"] == state and body["context"] == CONTEXT
        assert body["target_url"] == "https://github.com/org/t101-instructor/actions/runs/1"
        assert description is None or body["description"] == description
        total = f"{rows[name].total:.2f} / 100.00 points"
        assert body["description"].startswith(total)
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in first)


def test_the_second_run_grades_and_publishes_only_the_learners_who_pushed(runs):
    plan = runs["second"]["plan"]
    assert (plan["grade"], plan["shard_count"]) == ("2", "1")
    _, second, _ = runs["requests"]
    before, after = runs["rows"]
    regraded = {name for name in LEARNERS if after[name].run_id != before[name].run_id}
    assert regraded == {"ben", "dara"}
    assert after["dara"].commit == runs["heads"]["dara"] and after["dara"].total == 100.0
    sent = _statuses(second)
    assert set(sent) == {
        f"/repos/org/t101-ben/statuses/{runs['heads']['ben']}",
        f"/repos/org/t101-dara/statuses/{runs['heads']['dara']}",
    }
    assert len(second) == 2
    dara = sent[f"/repos/org/t101-dara/statuses/{runs['heads']['dara']}"]
    assert dara["state"] == "success"
    assert dara["target_url"].endswith("/actions/runs/2")


def test_a_run_that_finds_nothing_new_stops_after_the_plan(runs):
    plan = runs["third"]["plan"]
    assert (plan["grade"], plan["publish"], plan["shards"]) == ("0", "0", "[]")
    assert runs["third"]["published"] is None
    assert runs["requests"][2] == []


def test_the_gradebook_is_kept_on_its_branch_one_commit_a_run(runs):
    log = git(runs["origin"], "log", "--format=%s", BRANCH)
    assert log.splitlines() == ["Gradebook of run 2", "Gradebook of run 1"]
    files = git(runs["origin"], "ls-tree", "-r", "--name-only", BRANCH).splitlines()
    assert "gradebook.csv" in files and "amara/record.json" in files
    assert "amara/published.json" in files
    assert not [f for f in files if f.startswith(".")]  # no clones, locks or caches


def test_the_token_is_in_no_log_and_on_no_branch(runs):
    for run in ("first", "second", "third"):
        assert TOKEN not in "\n".join(runs[run]["rehearsal"].logs)
    found = subprocess.run(
        ["git", "-C", str(runs["origin"]), "grep", "-I", "-l", TOKEN, BRANCH],
        capture_output=True,
        text=True,
    )
    assert found.returncode == 1 and found.stdout == ""  # 1: git grep found nothing
