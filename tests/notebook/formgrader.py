"""nbgrader's formgrader, started as an instructor starts it, driven through its REST API.

`formgrader(folder)` starts a Jupyter server (nbgrader's formgrader extension is enabled when
nbgrader is installed) in the class's nbgrader folder, on 127.0.0.1 with a token, and stops it
afterwards. `grade_by_hand(...)` sets a cell's score as the formgrader's page does: it lists
the submitted notebooks, the submission's grades, and PUTs the manual score.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TOKEN = "t101-formgrader-test"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _call(url: str, method: str = "GET", body: dict | None = None) -> object:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"token {TOKEN}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read().decode("utf-8"))


@contextmanager
def formgrader(folder: Path, home: Path) -> Iterator[str]:
    """The base URL of a Jupyter server with formgrader, started in `folder`."""
    port = _free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
    }
    command = [sys.executable, "-m", "jupyter", "server", "--allow-root", "--no-browser"]
    command += ["--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}"]
    command += ["--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}"]
    command += [f"--ServerApp.root_dir={folder}"]
    home.mkdir(parents=True, exist_ok=True)
    with open(home / "server.log", "wb") as log:
        server = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=log)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    _call(f"{base}/api/status")
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise RuntimeError((home / "server.log").read_text()[-3000:]) from None
                    time.sleep(1)
            yield base
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=30)


def grade_by_hand(base: str, learner: str, cell: str, score: float, comment: str = "") -> dict:
    """Score `cell` of `learner`'s submission (and comment it), as formgrader's page does; the
    grade as the API returns it."""
    notebooks = _call(
        f"{base}/formgrader/api/submitted_notebooks/contextual_vectors/contextual_vectors"
    )
    (submission,) = [n["id"] for n in notebooks if n["student"] == learner]
    grades = _call(f"{base}/formgrader/api/grades?submission_id={submission}")
    (grade,) = [g["id"] for g in grades if g["name"] == cell]
    if comment:
        comments = _call(f"{base}/formgrader/api/comments?submission_id={submission}")
        (said,) = [c["id"] for c in comments if c["name"] == cell]
        _call(f"{base}/formgrader/api/comment/{said}", "PUT", {"manual_comment": comment})
    return _call(f"{base}/formgrader/api/grade/{grade}", "PUT", {"manual_score": score})
