"""Fixtures of the GitHub publishing tests: the recording server, a graded class folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.gradebook import store

from .recording_server import RecordingServer

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course.toml"
TOKEN = "ghp_0123456789abcdefSECRETtoken"
SHA = {
    "amara": "a" * 40,
    "ben": "b" * 40,
    "chidi": "c" * 40,
}
FULL = {
    "softmax": 10.0,
    "attention": 20.0,
    "multi_head_attention": 25.0,
    "feed_forward": 10.0,
    "add_norm": 10.0,
    "encoder": 25.0,
}


@pytest.fixture
def server():
    with RecordingServer() as running:
        yield running


def write_record(out: Path, record: store.LearnerRecord) -> None:
    """A learner folder as grade-class leaves it (record.json only)."""
    folder = store.learner_dir(out, record.learner)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / store.RECORD_FILE).write_text(record.to_json())


@pytest.fixture
def graded(tmp_path: Path) -> dict[str, Path]:
    """A gradebook folder: amara full marks, ben zero, chidi a grading error at a commit, dara
    nothing submitted (no commit); and a roster with a github column."""
    out = tmp_path / "grades"
    amara = store.LearnerRecord(
        "amara", commit=SHA["amara"], components=dict(FULL), total=100.0, max_score=100.0
    )
    ben = store.LearnerRecord(
        "ben",
        commit=SHA["ben"],
        components=dict.fromkeys(FULL, 0.0),
        total=0.0,
        max_score=100.0,
    )
    chidi = store.LearnerRecord(
        "chidi", commit=SHA["chidi"], error="The grader itself failed on this repository."
    )
    dara = store.LearnerRecord("dara", error="Nothing to grade.", nothing_submitted=True)
    for record in (amara, ben, chidi, dara):
        write_record(out, record)
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "learner,repo,github\n"
        "amara,https://github.com/org/t101-amara.git,\n"
        "ben,ben,org/t101-ben\n"
        "chidi,chidi,org/t101-chidi\n"
        "dara,dara,org/t101-dara\n"
    )
    return {"out": out, "roster": roster}


def env_for(server: RecordingServer, **more: str) -> dict[str, str]:
    """The environment of an Actions job whose API is the recording server."""
    return {
        "GITHUB_API_URL": server.url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "org/t101-instructor",
        "GITHUB_RUN_ID": "4242",
        "GH_TOKEN": TOKEN,
        **more,
    }
