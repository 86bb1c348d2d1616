"""The harness's handle on one running worker: start it, read its output, kill it.

Each worker gets a temporary folder (mode 0700): ``root/`` (its private root: HOME, TMPDIR, cwd,
the copied package), ``framework/`` (the copy of the runtime's worker side on its PYTHONPATH;
none when the zygote forks it) and ``output.log`` (its fds 1 and 2). The confinement plan comes
from isolation.py; a fork server (zygote_client.py) may start the worker instead of a fresh
interpreter, with the same plan.

Design (the folder's layout): docs/internals/runtime.md#the-temporary-folder-of-a-worker.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import weakref
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from autograder.runtime.harness import isolation, zygote_client
from autograder.runtime.harness.isolation import confinement_plan
from autograder.runtime.harness.private_copy import copy_package
from autograder.runtime.harness.worker_launch import (
    PYTHON_FLAGS,
    WORKER_MODULE,
    kill_group,
    worker_environment,
    write_framework,
)
from autograder.runtime.shared import wire

#: The capture file: created new (never an existing file or link), read and cleared by fd.
_CAPTURE_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class WorkerHandle:
    """The harness's handle on one running worker: its process group, channel, capture file and
    private copy.

    Forked by the zygote serving this process (zygote_client.py) when there is one, else a
    fresh interpreter; ``started_by`` says which ("zygote" or "fresh"). Both confine themselves
    with the same plan before learner code runs.
    """

    def __init__(
        self,
        package_dir: Path,
        package: str,
        *,
        memory_mb: int,
        file_mb: int,
        disk_mb: int = 0,
        hide: Sequence[Path] = (),
        startup_timeout: float = 60.0,
    ) -> None:
        self.copy = copy_package(package_dir, package)
        #: The worker's own processes, as the harness saw them when it was ready (process_tree.py)
        self.own_pids: frozenset[int] = frozenset()
        #: The tree's CPU seconds (cpu_time.tree_seconds) when its last request ended: the next
        #: request's baseline, so that nothing the tree computes between requests goes uncharged
        self.tree_cpu: float | None = None
        base = self.copy.base
        try:
            self.capture_path = base / "output.log"
            # The harness's own descriptor, opened before any learner code runs: the worker
            # may replace output.log (its folder is writable to it), so the harness never
            # opens that path again (a symbolic link there would make it read and truncate
            # a file of its choosing).
            self._capture = os.open(self.capture_path, _CAPTURE_FLAGS, 0o600)
            level, prefix = isolation.probe()
            limits = {"memory_mb": memory_mb, "file_mb": file_mb, "disk_mb": disk_mb}
            hide = [*hide, package_dir]
            forked = self._fork(level, hide, limits, startup_timeout)
            if forked is not None:
                self.process, self.conn = forked
                self.started_by = "zygote"
            else:
                self.process, self.conn = self._start_fresh(level, prefix, hide, limits)
                self.started_by = "fresh"
        except BaseException:
            if hasattr(self, "_capture"):
                os.close(self._capture)
            shutil.rmtree(base, ignore_errors=True)
            raise
        self._finalizer = weakref.finalize(
            self, _shutdown, self.process, self.conn, base, self._capture
        )

    def _start_fresh(
        self, level: str, prefix: Sequence[str], hide: list[Path], limits: dict[str, int]
    ) -> tuple[Any, Connection]:
        """(process, channel) of a worker started as a new interpreter."""
        base = self.copy.base
        framework_dir = write_framework(base)
        plan = confinement_plan(level, base, hide, disk_mb=limits["disk_mb"])
        parent_end, child_end = socket.socketpair()
        with child_end, open(self.capture_path, "ab") as capture:
            command = [*prefix, sys.executable, *PYTHON_FLAGS, "-m", WORKER_MODULE]
            command += [str(child_end.fileno()), str(limits["memory_mb"]), str(limits["file_mb"])]
            command.append(json.dumps(plan))
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=capture,
                stderr=capture,
                pass_fds=(child_end.fileno(),),
                cwd=self.copy.root,
                env=worker_environment(self.copy.root, framework_dir),
                start_new_session=True,
            )
        return process, Connection(parent_end.detach())

    def _fork(
        self, level: str, hide: list[Path], limits: dict[str, int], timeout: float
    ) -> tuple[Any, Connection] | None:
        """(process, channel) of a worker forked by the zygote; None without a zygote."""
        address = zygote_client.address()
        if address is None:
            return None
        base = self.copy.base
        plan = confinement_plan(
            level,
            base,
            [*hide, zygote_client.control_dir(address)],
            keep=[zygote_client.framework_dir(address)],
            disk_mb=limits["disk_mb"],
        )
        parent_end, child_end = socket.socketpair()
        with child_end, open(self.capture_path, "ab") as capture:
            try:
                process = zygote_client.spawn(
                    address,
                    root=self.copy.root,
                    env=worker_environment(self.copy.root, zygote_client.framework_dir(address)),
                    memory_mb=limits["memory_mb"],
                    file_mb=limits["file_mb"],
                    plan=plan,
                    channel=child_end.fileno(),
                    capture=capture.fileno(),
                    timeout=timeout,
                )
            except zygote_client.ZygoteUnavailable:
                parent_end.close()
                return None
        return process, Connection(parent_end.detach())

    def handshake(self, init: bytes, timeout: float) -> dict:
        """Send the init frame (encoded), wait up to ``timeout`` s for the ready message."""
        self.conn.send_bytes(init)
        if not self.conn.poll(timeout):
            raise TimeoutError(f"no answer within {timeout:g} s")
        ready = wire.loads(self.conn.recv_bytes())
        if not ready.get("ok"):
            raise RuntimeError(ready.get("internal", "no ready message"))
        return ready

    @property
    def root(self) -> Path:
        return self.copy.root

    @property
    def capture_fd(self) -> int:
        """The harness's own descriptor of the capture file (opened before the worker ran)."""
        return self._capture

    def take_output(self, cap: int) -> tuple[bytes, int]:
        """Read and clear what the worker wrote since the last call: (first cap bytes, total).
        One fstat when it wrote nothing (most requests), through the descriptor opened at
        start, never the path."""
        try:
            total = os.fstat(self._capture).st_size
            if total == 0:
                return b"", 0
            head = os.pread(self._capture, cap, 0) if cap > 0 else b""
            os.ftruncate(self._capture, 0)
        except OSError:
            return b"", 0
        return head, total

    def kill(self) -> int | None:
        """SIGKILL the whole process group; return the worker's exit status."""
        kill_group(self.process)
        return self.process.returncode

    def wait_exit(self, timeout: float = 5.0) -> int | None:
        """After the channel closed: the exit status (negative: the signal), killing stragglers."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        return self.kill()

    def close(self) -> None:
        """Kill the process group and delete the temp dir; idempotent."""
        self._finalizer()


def _shutdown(process: Any, conn: Connection, base: Path, capture: int) -> None:
    kill_group(process)
    try:
        os.close(capture)
    except OSError:
        pass
    if hasattr(process, "close"):  # a forked worker's line to the zygote
        process.close()
    try:
        conn.close()
    except OSError:
        pass
    shutil.rmtree(base, ignore_errors=True)
