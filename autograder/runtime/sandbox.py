"""Starting the worker: a private copy of the package, an allow-listed environment, rlimits, kill.

Layout of one worker's temporary directory (mode 0700)::

    autograder-XXXX/
      root/              the private root: HOME, TMPDIR, cwd, first on sys.path
        t101/            the learner's package, copied (regular files only)
      framework/         on the worker's PYTHONPATH
        autograder/__init__.py      an empty stub
        autograder/runtime/         a copy of the runtime package (the worker imports nothing
                                    else of ours; a copy, because the original may be hidden)
      output.log         the worker's fds 1 and 2 (learner stdout and stderr), append mode

Where the platform allows it the worker starts in its own namespaces and hides the course, the
harness's folders and the original submission from learner code (see isolation.py).

When a worker fork server serves this process (zygote_client.py), the worker is a fork of it
instead of a fresh interpreter: no ``framework/`` folder then (the zygote imported its own copy
of the runtime), and the zygote's control folder is one more hidden path. Everything else
above, and the confinement plan, are the same.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from autograder.runtime import isolation

#: The runtime package, made importable in the worker (alone: the worker never imports the
#: rest of the framework) through a symlink under a stub ``autograder`` package.
RUNTIME_DIR = Path(__file__).resolve().parent
_STUB_INIT = '"""Only autograder.runtime is importable in the worker."""\n'
MAX_PACKAGE_BYTES = 20 * 1024 * 1024
MAX_PACKAGE_FILES = 2000
ENV_PASSTHROUGH = ("PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
# Equivalent to `python -I` (no user site, no script directory on sys.path), except that the
# PYTHON* variables of our own allow-listed environment take effect (-I would ignore
# PYTHONHASHSEED). -B: no bytecode files; -u: unbuffered, so output survives a kill.
PYTHON_FLAGS = ("-s", "-P", "-B", "-u")
WORKER_MODULE = "autograder.runtime.worker"
#: The capture file: created new (never an existing file or link), read and cleared by fd.
_CAPTURE_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class PackageTooLarge(Exception):
    """The learner's package holds more than MAX_PACKAGE_BYTES (or MAX_PACKAGE_FILES)."""


@dataclass
class PrivateCopy:
    """Where the copy went and which entries were refused, by path relative to the package."""

    base: Path
    root: Path
    refused: dict[str, str] = field(default_factory=dict)


def copy_package(package_dir: Path, package: str) -> PrivateCopy:
    """Copy the package's regular files into a fresh private temp dir (missing dir: empty root).

    Skips ``__pycache__``; a symlink is followed only if its target stays inside the package
    (else it is refused, with a reason). Raises PackageTooLarge past the size or file cap.
    """
    base = Path(tempfile.mkdtemp(prefix="autograder-")).resolve()
    root = base / "root"
    copy = PrivateCopy(base=base, root=root)
    try:
        root.mkdir()
        if package_dir.is_dir():
            _copy_tree(package_dir.resolve(), root / package, copy)
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    return copy


def _copy_tree(source: Path, target: Path, copy: PrivateCopy) -> None:
    total = 0
    files = 0
    pending = [Path()]
    target.mkdir()
    while pending:
        relative_dir = pending.pop()
        for entry in sorted(os.scandir(source / relative_dir), key=lambda e: e.name):
            relative = relative_dir / entry.name
            if entry.name == "__pycache__":
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                real = path.resolve()
                if not real.is_relative_to(source):
                    copy.refused[relative.as_posix()] = "a symbolic link to outside your package"
                    continue
                if not real.is_file():
                    copy.refused[relative.as_posix()] = "a symbolic link to a folder"
                    continue
                path = real
            if path.is_dir():
                (target / relative).mkdir()
                pending.append(relative)
            elif path.is_file():
                files += 1
                total += path.stat().st_size
                if total > MAX_PACKAGE_BYTES or files > MAX_PACKAGE_FILES:
                    raise PackageTooLarge()
                shutil.copyfile(path, target / relative, follow_symlinks=False)


def worker_environment(private_root: Path, framework_dir: Path) -> dict[str, str]:
    """The worker's whole environment: an allow-list, never the parent's tokens or secrets."""
    env = {name: os.environ[name] for name in ENV_PASSTHROUGH if name in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update(
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
        HOME=str(private_root),
        TMPDIR=str(private_root),
        PYTHONPATH=str(framework_dir),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONHASHSEED="0",
        PYTHONNOUSERSITE="1",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    return env


def apply_worker_limits(memory_mb: int, file_mb: int) -> None:
    """Called by the worker on itself, before any learner code: memory, file size, no cores."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the cap fail with EFBIG instead
    _lower_limit(resource.RLIMIT_CORE, 0)
    _lower_limit(resource.RLIMIT_FSIZE, file_mb * 1024 * 1024)
    _lower_limit(resource.RLIMIT_AS, memory_mb * 1024 * 1024)


def _lower_limit(which: int, value: int) -> None:
    """Set soft and hard limits to value, or to the hard limit already in force if lower."""
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def write_framework(base: Path) -> Path:
    """``base/framework``: a stub ``autograder`` package holding a copy of the runtime."""
    framework_dir = base / "framework"
    (framework_dir / "autograder").mkdir(parents=True)
    (framework_dir / "autograder" / "__init__.py").write_text(_STUB_INIT)
    shutil.copytree(
        RUNTIME_DIR,
        framework_dir / "autograder" / "runtime",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return framework_dir


class WorkerProcess:
    """One running worker: its process group, its channel, its capture file, its temp dir.

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
        hide: Sequence[Path] = (),
        startup_timeout: float = 60.0,
    ) -> None:
        self.copy = copy_package(package_dir, package)
        base = self.copy.base
        try:
            self.capture_path = base / "output.log"
            # The harness's own descriptor, opened before any learner code runs: the worker
            # may replace output.log (its folder is writable to it), so the harness never
            # opens that path again (a symbolic link there would make it read and truncate
            # a file of its choosing).
            self._capture = os.open(self.capture_path, _CAPTURE_FLAGS, 0o600)
            level, prefix = isolation.probe()
            hide = [*hide, package_dir]
            forked = self._fork(level, hide, memory_mb, file_mb, startup_timeout)
            if forked is not None:
                self.process, self.conn = forked
                self.started_by = "zygote"
            else:
                framework_dir = write_framework(base)
                plan = confinement_plan(level, base, hide)
                parent_end, child_end = socket.socketpair()
                with child_end, open(self.capture_path, "ab") as capture:
                    command = [*prefix, sys.executable, *PYTHON_FLAGS, "-m", WORKER_MODULE]
                    command += [str(child_end.fileno()), str(memory_mb), str(file_mb)]
                    command.append(json.dumps(plan))
                    self.process = subprocess.Popen(
                        command,
                        stdin=subprocess.DEVNULL,
                        stdout=capture,
                        stderr=capture,
                        pass_fds=(child_end.fileno(),),
                        cwd=self.copy.root,
                        env=worker_environment(self.copy.root, framework_dir),
                        start_new_session=True,
                    )
                self.conn = Connection(parent_end.detach())
                self.started_by = "fresh"
        except BaseException:
            if hasattr(self, "_capture"):
                os.close(self._capture)
            shutil.rmtree(base, ignore_errors=True)
            raise
        self._finalizer = weakref.finalize(
            self, _shutdown, self.process, self.conn, base, self._capture
        )

    def _fork(
        self, level: str, hide: list[Path], memory_mb: int, file_mb: int, timeout: float
    ) -> tuple[Any, Connection] | None:
        """(process, channel) of a worker forked by the zygote; None without a zygote."""
        from autograder.runtime import zygote_client

        address = zygote_client.address()
        if address is None:
            return None
        base = self.copy.base
        plan = confinement_plan(
            level,
            base,
            [*hide, zygote_client.control_dir(address)],
            keep=[zygote_client.framework_dir(address)],
        )
        parent_end, child_end = socket.socketpair()
        with child_end, open(self.capture_path, "ab") as capture:
            try:
                process = zygote_client.spawn(
                    address,
                    root=self.copy.root,
                    env=worker_environment(self.copy.root, zygote_client.framework_dir(address)),
                    memory_mb=memory_mb,
                    file_mb=file_mb,
                    plan=plan,
                    channel=child_end.fileno(),
                    capture=capture.fileno(),
                    timeout=timeout,
                )
            except zygote_client.ZygoteUnavailable:
                parent_end.close()
                return None
        return process, Connection(parent_end.detach())

    @property
    def root(self) -> Path:
        return self.copy.root

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
        _kill_group(self.process)
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


def confinement_plan(
    level: str, base: Path, hide: Sequence[Path], keep: Sequence[Path] = ()
) -> dict[str, Any]:
    """What the worker does to itself before learner code runs (isolation.confine); ``keep``:
    folders it must still read besides the Python installation and ``base``."""
    if level == isolation.PROCESS_GROUP:
        return {"level": level}
    keep = sorted({*isolation.needed_paths(base), *(Path(os.path.realpath(k)) for k in keep)})
    roots = [*hide, Path.home(), Path.cwd()]
    return {
        "level": level,
        "hide": isolation.hide_targets(roots, keep),
        "writable": str(base),
        "uid_ok": isolation.nobody_can_reach([k for k in keep if k != base]),
    }


def _kill_group(process: Any) -> None:
    """SIGKILL the process group of a Popen or a zygote_client.ForkedProcess, and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _shutdown(process: Any, conn: Connection, base: Path, capture: int) -> None:
    _kill_group(process)
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
