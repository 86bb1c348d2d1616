"""How a worker process is launched: its interpreter flags, its environment, its framework folder.

Shared by a fresh worker (harness/worker_handle.py) and the worker fork server
(harness/zygote_client.py), which starts with the same environment and framework copy.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

#: The runtime package; only its worker side and what both sides share are copied for the
#: worker (``write_framework``): the harness's modules are not even on the worker's disk.
RUNTIME_DIR = Path(__file__).resolve().parent.parent
#: What of RUNTIME_DIR the worker gets (a course's stand-ins come as text, in the init frame).
WORKER_SIDE = ("__init__.py", "shared", "worker")
_STUB_INIT = '"""Only the worker side of autograder.runtime is importable in the worker."""\n'
ENV_PASSTHROUGH = ("PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
# Equivalent to `python -I` (no user site, no script directory on sys.path), except that the
# PYTHON* variables of our own allow-listed environment take effect (-I would ignore
# PYTHONHASHSEED). -B: no bytecode files; -u: unbuffered, so output survives a kill.
PYTHON_FLAGS = ("-s", "-P", "-B", "-u")
WORKER_MODULE = "autograder.runtime.worker"  # its __main__.py runs worker/serve.py


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


def write_framework(base: Path) -> Path:
    """``base/framework``: a stub ``autograder`` package holding the worker side of the runtime."""
    framework_dir = base / "framework"
    (framework_dir / "autograder").mkdir(parents=True)
    (framework_dir / "autograder" / "__init__.py").write_text(_STUB_INIT)
    copy_worker_side(framework_dir / "autograder" / "runtime")
    return framework_dir


def copy_worker_side(target: Path) -> None:
    """Copy the worker side of the runtime (WORKER_SIDE) to ``target``, a new folder."""
    target.mkdir(parents=True)
    for name in WORKER_SIDE:
        source = RUNTIME_DIR / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(source, target / name)


def kill_group(process: Any) -> None:
    """SIGKILL the process group of a Popen or a zygote_client.ZygoteChild, and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
