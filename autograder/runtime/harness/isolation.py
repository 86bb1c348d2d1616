"""Confining the worker with what the platform allows: namespaces, hidden paths, fewer privileges.

Levels, strongest first (``probe()`` picks one once per harness process):

``namespaces``
    The harness is root: the worker starts under ``unshare`` in fresh PID, mount, network and
    IPC namespaces, with a private empty ``/dev/shm``. It is PID 1 of its namespace, so when it
    dies the kernel kills every process learner code started, detached ones included; its
    ``/proc`` shows only its own processes (never the harness's environment); it has no network.
    Before any learner code runs it covers
    the hidden paths (the course root with the references and hidden tests, the harness's
    folder and home, the original submission) with empty read-only mounts, remounts every other
    file system read-only (only its private copy stays writable) and gives up root: it becomes
    ``nobody`` when the Python installation is readable by ``nobody``, else it keeps uid 0 with
    no capabilities at all (it cannot undo the mounts, and the files it can still read are the
    ones not hidden).
``user-namespaces``
    The same under ``unshare --user --map-root-user`` when the harness is not root but the kernel
    allows unprivileged user namespaces; the worker always keeps its mapped uid, without
    capabilities.
``process-group``
    Neither works: the worker has its own session and process group, its environment, rlimits
    and private copy, but it can read whatever the harness's user can read, and a process that
    left its process group survives the kill. SECURITY.md says what remains possible.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from autograder.runtime.shared.confinement import (
    NAMESPACES,
    NOBODY,
    PROCESS_GROUP,
    USER_NAMESPACES,
)

__all__ = [
    "MAX_HIDDEN",
    "NAMESPACES",
    "NOBODY",
    "PROCESS_GROUP",
    "SYSTEM_DIRS",
    "USER_NAMESPACES",
    "confinement_plan",
    "hide_targets",
    "needed_paths",
    "nobody_can_reach",
    "probe",
]
_UNSHARE = ("--pid", "--fork", "--kill-child", "--mount", "--mount-proc", "--net", "--ipc")
_UNSHARE_USER = ("--user", "--map-root-user")
MAX_HIDDEN = 500  # mount points per worker; a huge home folder is covered in one piece instead
#: Never covered, even when the harness runs from one of them: the system needs them.
SYSTEM_DIRS = frozenset(
    [
        "/",
        "/bin",
        "/dev",
        "/etc",
        "/lib",
        "/lib64",
        "/opt",
        "/proc",
        "/run",
        "/sbin",
        "/sys",
        "/tmp",
        "/usr",
        "/var",
    ]
)


@functools.cache
def probe() -> tuple[str, tuple[str, ...]]:
    """(level, command prefix) of the strongest confinement this machine allows."""
    unshare = shutil.which("unshare")
    if unshare is None or sys.platform != "linux":
        return PROCESS_GROUP, ()
    candidates = [(USER_NAMESPACES, (unshare, *_UNSHARE_USER, *_UNSHARE))]
    if os.geteuid() == 0:
        candidates.insert(0, (NAMESPACES, (unshare, *_UNSHARE)))
    for level, prefix in candidates:
        try:
            done = subprocess.run([*prefix, "true"], capture_output=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return level, prefix
    return PROCESS_GROUP, ()


def needed_paths(base: Path) -> list[Path]:
    """What the worker must still reach: the Python installation, its libraries, its temp dir."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), base}
    paths.add(Path(os.path.realpath(sys.executable)).parent.parent)
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        paths.add(Path(sysconfig.get_paths()[name]))
    paths.update(Path(p) for p in site.getsitepackages())
    for module in ("numpy", "torch"):
        found = sys.modules.get(module)
        if found is not None and getattr(found, "__file__", None):
            paths.add(Path(found.__file__).parent.parent)
    return sorted({Path(os.path.realpath(p)) for p in paths})


def hide_targets(roots: Iterable[Path], keep: Sequence[Path]) -> list[str]:
    """The paths to cover so that nothing under ``roots`` stays visible except ``keep``.

    A root holding no kept path is covered whole; one holding some is covered child by child,
    descending only into the children that lead to a kept path. System folders (SYSTEM_DIRS)
    are never roots: a harness started from ``/`` or ``/tmp`` does not hide the system.
    """
    # Plain strings (absolute, resolved, so "under" is a prefix test): a worker start walks a
    # few hundred entries here, and pathlib's parsing was most of that.
    kept = [str(k) for k in keep]
    targets: list[str] = []
    covered: set[str] = set()
    roots = {os.path.realpath(r) for r in roots if os.path.lexists(r)}
    pending = sorted((r for r in roots if r not in SYSTEM_DIRS), key=_parts)
    while pending and len(targets) < MAX_HIDDEN:
        path = pending.pop(0)
        if any(_under(path, k) for k in kept) or path in covered:
            continue
        if not any(_under(k, path) for k in kept):
            targets.append(path)
            covered.add(path)
            continue
        try:
            with os.scandir(path) as entries:
                children = sorted(e.path for e in entries if not e.is_symlink())
        except OSError:
            continue
        pending.extend(children)
    return targets


def _parts(path: str) -> list[str]:
    """Sort key: pathlib's order (component by component), not the strings' order."""
    return path.split("/")


def _under(path: str, folder: str) -> bool:
    """``Path(path).is_relative_to(folder)`` for absolute, normalised paths."""
    return path == folder or path.startswith(folder if folder.endswith("/") else folder + "/")


def nobody_can_reach(paths: Sequence[Path]) -> bool:
    """Whether every path and its ancestors are searchable (and readable) by other users."""
    for path in paths:
        for part in [path, *path.parents]:
            try:
                mode = part.stat().st_mode
            except OSError:
                return False
            if not mode & 0o001 or (part == path and not mode & 0o004):
                return False
    return True


def confinement_plan(
    level: str, base: Path, hide: Sequence[Path], keep: Sequence[Path] = ()
) -> dict[str, Any]:
    """What the worker does to itself before learner code runs (worker/confine.confine); ``keep``:
    folders it must still read besides the Python installation and ``base``."""
    if level == PROCESS_GROUP:
        return {"level": level}
    keep = sorted({*needed_paths(base), *(Path(os.path.realpath(k)) for k in keep)})
    roots = [*hide, Path.home(), Path.cwd()]
    return {
        "level": level,
        "hide": hide_targets(roots, keep),
        "writable": str(base),
        "uid_ok": nobody_can_reach([k for k in keep if k != base]),
    }
