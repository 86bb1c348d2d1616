"""A session the harness forgets to close is still cleaned up when the interpreter exits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

HARNESS = """\
import sys
from pathlib import Path

from autograder.runtime import LearnerSession, Limits

session = LearnerSession(Path(sys.argv[1]), package="toypkg", limits=Limits(test_timeout=20))
root = session.module("where").root()
# The worker's outermost process as the harness sees it (under namespaces learner code is PID 1).
print(session._channel.worker.process.pid, root, flush=True)
# no close(): the interpreter exits with the worker still running
"""


def test_workers_are_killed_and_private_copies_removed_at_interpreter_exit(tmp_path: Path):
    package_dir = tmp_path / "toypkg"
    package_dir.mkdir()
    (package_dir / "where.py").write_text(
        textwrap.dedent(
            """\
            import os


            def pid():
                return os.getpid()


            def root():
                return os.getcwd()
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, str(package_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    pid_text, root = done.stdout.split()
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid_text}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid_text}").exists()
    assert not Path(root).exists()
