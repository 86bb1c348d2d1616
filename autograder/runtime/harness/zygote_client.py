"""The harness's side of the worker fork server (worker/zygote.py): start it, ask it for a worker.

A grading command wraps its run in ``serving()``: it starts one zygote and names its socket in
the environment variable AUTOGRADER_ZYGOTE, which the command's own processes inherit (a batch's
forked harnesses too) and a worker never sees (its environment is an allow-list).
``worker_handle.WorkerHandle`` then asks the zygote for each worker and starts a fresh
``python -m autograder.runtime.worker`` only when there is no zygote or it does not answer.

Layout of the zygote's folder (mode 0755)::

    zygote-autograder-XXXX/
      framework/    the runtime copy the zygote (and so every forked worker) imports
      home/         the zygote's HOME and TMPDIR, empty
      control/      mode 0700, covered in every worker: the socket and the zygote's log
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.runtime.harness.worker_launch import (
    PYTHON_FLAGS,
    worker_environment,
    write_framework,
)
from autograder.runtime.shared import affinity
from autograder.runtime.shared.zygote_protocol import CONTROL_DIR, MODULE, READY_FILE

ENV = "AUTOGRADER_ZYGOTE"
SOCKET_NAME = "zygote.sock"
LOG_NAME = "zygote.log"
STOP_GRACE = 2.0


class ZygoteUnavailable(Exception):
    """The zygote cannot give a worker (gone, refused, silent): start a fresh one instead."""


def supported() -> bool:
    """Fork servers need fork, pidfds and SCM_RIGHTS: Linux."""
    return sys.platform == "linux" and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")


@dataclass
class Zygote:
    folder: Path
    process: subprocess.Popen

    @property
    def address(self) -> str:
        return str(self.folder / CONTROL_DIR / SOCKET_NAME)

    def stop(self) -> None:
        """Close its lifeline (it kills its remaining workers and exits), then its folder. A
        zygote still importing torch cannot read it and has no worker: it is killed at once
        (a command that stopped on a bad argument says so without waiting). One that does not
        exit within STOP_GRACE seconds is killed too (its workers, if any, end when their
        harness closes their channel)."""
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
            if not (self.folder / CONTROL_DIR / READY_FILE).exists():
                raise subprocess.TimeoutExpired(MODULE, 0)
            self.process.wait(timeout=STOP_GRACE)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def start() -> Zygote:
    """Start a zygote; it imports torch in the background while the caller goes on."""
    folder = Path(tempfile.mkdtemp(prefix="zygote-autograder-")).resolve()
    try:
        framework = write_framework(folder)
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        home, control = folder / "home", folder / CONTROL_DIR
        home.mkdir(mode=0o755)
        control.mkdir(mode=0o700)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with listener, open(control / LOG_NAME, "ab") as log:
            listener.bind(str(control / SOCKET_NAME))
            listener.listen(64)
            command = [sys.executable, *PYTHON_FLAGS, "-m", MODULE]
            process = subprocess.Popen(
                [*command, str(listener.fileno()), str(folder)],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=log,
                pass_fds=(listener.fileno(),),
                cwd=home,
                env=worker_environment(home, framework),
                start_new_session=True,
            )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Zygote(folder, process)


@contextmanager
def serving() -> Iterator[Zygote | None]:
    """A zygote for the workers of this block (None where unsupported, where one already
    serves, or where it cannot start: e.g. a TMPDIR so deep that its socket's path exceeds
    the 107 bytes a Unix socket address holds; workers then start fresh)."""
    if os.environ.get(ENV) or not supported() or os.environ.get("AUTOGRADER_NO_ZYGOTE"):
        yield None
        return
    try:
        zygote = start()
    except OSError:
        yield None
        return
    os.environ[ENV] = zygote.address
    try:
        yield zygote
    finally:
        if os.environ.get(ENV) == zygote.address:
            del os.environ[ENV]
        zygote.stop()


def address() -> str | None:
    """The zygote serving this process, if any."""
    value = os.environ.get(ENV)
    return value if value and supported() else None


def framework_dir(address: str) -> Path:
    return Path(address).parent.parent / "framework"


def control_dir(address: str) -> Path:
    return Path(address).parent


class ZygoteChild:
    """A worker forked by the zygote, seen through its connection to the zygote, with the part
    of Popen's interface worker_handle.py uses (pid, wait, returncode)."""

    def __init__(self, conn: socket.socket, pid: int) -> None:
        self._conn = conn
        self.pid = pid
        self.returncode: int | None = None
        self._closed = False

    def wait(self, timeout: float | None = None) -> int | None:
        """Its exit status (negative: the signal); None if the zygote is gone and cannot say."""
        while self.returncode is None and not self._closed:
            if not select.select([self._conn], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(MODULE, timeout or 0)
            try:
                message = _decode(self._conn.recv(4096))
            except OSError:
                message = None
            if message is None:
                self.close()
            elif "exit" in message:
                self.returncode = int(message["exit"])
        return self.returncode

    def close(self) -> None:
        """Hang up: the zygote kills the worker's process group if it still runs."""
        if not self._closed:
            self._closed = True
            self._conn.close()


def spawn(
    address: str,
    *,
    root: Path,
    env: dict[str, str],
    memory_mb: int,
    file_mb: int,
    plan: dict[str, Any],
    channel: int,
    capture: int,
    timeout: float,
) -> ZygoteChild:
    """Ask the zygote for a worker on these descriptors; ZygoteUnavailable if it gives none
    within ``timeout`` seconds (it may still be importing torch)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    request = {"root": str(root), "env": env, "memory_mb": memory_mb, "file_mb": file_mb}
    request["plan"] = plan
    request["cpus"] = affinity.allowed()  # a fresh worker would inherit them (affinity.py)
    try:
        conn.connect(address)
        socket.send_fds(conn, [json.dumps(request).encode()], [channel, capture])
        if not select.select([conn], [], [], timeout)[0]:
            raise ZygoteUnavailable(f"no answer within {timeout:g} s")
        message = _decode(conn.recv(4096))
    except OSError as error:
        conn.close()
        raise ZygoteUnavailable(str(error)) from None
    except ZygoteUnavailable:
        conn.close()
        raise
    if message is None or "pid" not in message:
        conn.close()
        raise ZygoteUnavailable((message or {}).get("error", "it hung up"))
    return ZygoteChild(conn, int(message["pid"]))


def _decode(data: bytes) -> dict[str, Any] | None:
    if not data:
        return None
    try:
        message = json.loads(data)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
