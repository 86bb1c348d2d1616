"""No git that grade-class started to fetch a repository outlives it (gradebook/git_network.py).

A server that accepts connections and never answers keeps every clone waiting (git:// has no
stall limit). SIGINT to the command alone (what `timeout -s INT` or a cancelled CI job sends;
a terminal's Ctrl-C also reaches git itself) must end the command at once, exit status 130,
with no git left running and no half-made clone; after a kill -9 of the command, every git it
started must die too, and git's helper processes (git-remote-http) with it (git_network's
reaper)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.batch.conftest import TOY_COURSE, url_roster
from tests.processes import running_with

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc; PR_SET_PDEATHSIG")

LEARNERS = 3
WAIT = 120.0  # seconds for the clones to start, or for the command to end


@pytest.fixture(params=["git", "http"])
def silent_url(request):
    """A URL (unique path) on a server that accepts connections and never answers: git://
    (git alone) or http:// (git and its helper git-remote-http, another process)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    marker = f"silent-{uuid.uuid4().hex}"
    try:
        url = f"{request.param}://127.0.0.1:{listener.getsockname()[1]}/{marker}.git"
        yield url, marker, 2 if request.param == "http" else 1  # processes per clone
    finally:
        listener.close()


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what} after {WAIT:.0f} s"
        time.sleep(0.1)


@contextmanager
def _cloning(
    tmp_path: Path, url: str, marker: str, per_clone: int
) -> Iterator[tuple[subprocess.Popen, Path]]:
    """grade-class on LEARNERS learners who all give url (never in the command line: the
    marker must name git processes only), from when all their clones run; whatever happens,
    nothing is left running."""
    roster_csv = url_roster(tmp_path, {f"l{i}": url for i in range(LEARNERS)})
    out = tmp_path / "out"
    command = [sys.executable, "-m", "autograder", "grade-class", str(roster_csv)]
    process = subprocess.Popen(
        [*command, "--out", str(out), "--course", str(TOY_COURSE), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # SIGINT to the command alone, as `timeout -s INT` sends it
        env={**os.environ, "GIT_HTTP_LOW_SPEED_TIME": "3600"},  # no giving up on its own
    )
    try:
        clones = LEARNERS * per_clone
        _wait_for(lambda: len(running_with(marker)) >= clones, "the clones to start")
        yield process, out
    finally:
        process.kill()
        process.communicate()
        for pid in running_with(marker):  # never leave one behind, even when a test fails
            os.kill(pid, signal.SIGKILL)


def test_sigint_to_the_command_alone_stops_every_clone_at_once(silent_url, tmp_path) -> None:
    url, marker, per_clone = silent_url
    with _cloning(tmp_path, url, marker, per_clone) as (process, out):
        os.kill(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=WAIT)
        assert process.returncode == 130, err
        assert "run the same command again" in err
        assert running_with(marker) == {}
        assert list((out / ".repos" / ".partial").iterdir()) == []


def test_no_clone_outlives_a_killed_command(silent_url, tmp_path) -> None:
    url, marker, per_clone = silent_url
    with _cloning(tmp_path, url, marker, per_clone) as (process, _):
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=WAIT)
        _wait_for(lambda: running_with(marker) == {}, "the clones to die")
