"""A git that grade-class starts is listed with the reaper before it runs
(gradebook/git_network.py): killed right after starting git, before any bookkeeping of its
own, the command still leaves none of git's helpers running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.processes import running_with

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

# A stand-in for git: starts a helper in its own process group (as git starts
# git-remote-https), says so, and waits for it.
FAKE_GIT = """#!/bin/sh
{python} -c "import time; time.sleep(300)" {marker} &
touch {started}
wait
"""

# The command's fetch, descheduled for a minute just after Popen returned git: the moment
# between git starting and the command noting it.
COMMAND = """
import os, subprocess, threading, time
from autograder.gradebook import git_network

real = subprocess.Popen

class Descheduled(real):
    def __init__(self, args, *rest, **options):
        super().__init__(args, *rest, **options)
        if args[0] == "git":
            time.sleep(60)

subprocess.Popen = Descheduled
commands = git_network.Commands()
threading.Thread(target=commands.run, args=(["clone"], dict(os.environ), 600)).start()
"""


def test_git_helpers_die_with_a_command_killed_as_git_started(tmp_path: Path) -> None:
    marker, started = f"helper-{uuid.uuid4().hex}", tmp_path / "started"
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(FAKE_GIT.format(python=sys.executable, marker=marker, started=started))
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    command = subprocess.Popen([sys.executable, "-c", COMMAND], env=env)
    try:
        deadline = time.monotonic() + 60
        while not (started.exists() and running_with(marker)):
            assert time.monotonic() < deadline, "the fake git never started its helper"
            assert command.poll() is None, "the command ended on its own"
            time.sleep(0.05)
        command.send_signal(signal.SIGKILL)
        command.wait()
        deadline = time.monotonic() + 30
        while running_with(marker):
            assert time.monotonic() < deadline, "git's helper outlived the killed command"
            time.sleep(0.1)
    finally:
        command.kill()
        command.wait()
        for pid in running_with(marker):
            os.kill(pid, signal.SIGKILL)
