"""Confining the worker with what the platform allows: namespaces, hidden paths, fewer privileges.

``probe()`` picks one level once per harness process, strongest first; the worker's confinement
plan is built here and applied by worker/confine.py:

- ``namespaces`` (the harness is root): fresh PID, mount, network and IPC namespaces, a root
  file system of its own from an allow-list (worker/new_root.py) with a private root of
  ``[limits] disk_mb``, then ``nobody`` or uid 0 without capabilities.
- ``user-namespaces``: the same under ``unshare --user --map-root-user``, keeping the mapped uid.
- ``process-group``: neither works; the worker can read whatever the harness's user can read.

Design: docs/internals/runtime.md#isolation-levels; what each level leaves possible: SECURITY.md,
"What the worker can reach, by level".
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

#: System folders the worker reads: programs and libraries, no data of the host's. Where the
#: host has a symbolic link (``/lib -> usr/lib``), the worker's root has the same link.
SYSTEM_READ = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: What the dynamic loader, the clock and fontconfig (matplotlib, in the notebook) read in
#: /etc, and what a CPU library reads in /sys: no data of the host's.
HOST_FILES_READ = (
    "/etc/fonts",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/sys/devices/system/cpu",
)

__all__ = [
    "CONFINED_LINE",
    "HOST_FILES_READ",
    "MAX_HIDDEN",
    "NAMESPACES",
    "NOBODY",
    "PROCESS_GROUP",
    "SYSTEM_DIRS",
    "SYSTEM_READ",
    "UNCONFINED_LINE",
    "USER_NAMESPACES",
    "allow_list",
    "confinement_plan",
    "header_line",
    "hide_targets",
    "max_processes",
    "needed_paths",
    "nobody_can_reach",
    "probe",
    "readable_by_others",
]
_UNSHARE = ("--pid", "--fork", "--kill-child", "--mount", "--mount-proc", "--net", "--ipc")
_UNSHARE_USER = ("--user", "--map-root-user")
#: Processes a worker may start beyond those its user already has (a fork bomb stops there).
MAX_PROCESSES = 256
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


#: grader.log's line (pytest's report header) on the confinement in force.
CONFINED_LINE = (
    "autograder: learner code runs confined ({level}): it sees only its own files and the "
    "Python installation, has no network and {disk_mb} MiB of disk"
)
UNCONFINED_LINE = (
    "autograder: learner code runs without namespaces on this machine ({level}): it can read "
    "what the grader's user can read"
)


def header_line(disk_mb: int) -> str:
    """What grader.log says of the worker's confinement (``probe()``'s level)."""
    level = probe()[0]
    template = UNCONFINED_LINE if level == PROCESS_GROUP else CONFINED_LINE
    return template.format(level=level, disk_mb=disk_mb)


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


def readable_by_others(path: Path) -> bool:
    """Whether other users may read ``path`` (and enter it, for a folder)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return bool(mode & 0o004) and (not path.is_dir() or bool(mode & 0o001))


def max_processes(level: str) -> int:
    """RLIMIT_NPROC for the worker: the processes its user has now, plus MAX_PROCESSES (the
    kernel counts a user's processes across the machine; root's are not limited)."""
    uid = NOBODY if level == NAMESPACES else os.getuid()
    count = 0
    try:
        with os.scandir("/proc") as entries:
            for entry in entries:
                if entry.name.isdigit():
                    try:
                        count += entry.stat().st_uid == uid
                    except OSError:
                        continue
    except OSError:
        return 0
    return count + MAX_PROCESSES


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


def allow_list(base: Path, keep: Sequence[Path] = ()) -> tuple[list[str], dict[str, str]]:
    """What of the host the worker's root holds, besides its private folder ``base``: the
    folders and files it reads (none inside another), and the symbolic links it has instead of
    SYSTEM_READ folders that are links on the host."""
    paths: set[str] = set()
    links: dict[str, str] = {}
    for path in SYSTEM_READ:
        if os.path.islink(path):
            links[path] = os.readlink(path)
        elif os.path.isdir(path):
            paths.add(path)
    paths.update(p for p in HOST_FILES_READ if os.path.exists(p))
    needed = [*needed_paths(base), *(Path(os.path.realpath(k)) for k in keep)]
    paths.update(str(p) for p in needed if p != base and p.exists())
    ordered = sorted(paths, key=_parts)
    allowed: list[str] = []
    for path in ordered:
        if not any(_under(path, kept) for kept in allowed):
            allowed.append(path)
    return allowed, links


def confinement_plan(
    level: str,
    base: Path,
    hide: Sequence[Path],
    keep: Sequence[Path] = (),
    *,
    disk_mb: int = 0,
    own_root: bool = True,
) -> dict[str, Any]:
    """What the worker does to itself before learner code runs (worker/confine.confine).

    ``keep``: folders it must still read besides the Python installation and ``base``.
    ``own_root``: a root of its own from the allow-list (allow_list), where only the hidden
    paths that lie inside an allowed folder need a cover, and a private root of ``disk_mb``
    MiB (0: no quota); else the host's root with ``hide`` and the harness's home and folder
    covered and every other file system read-only."""
    if level == PROCESS_GROUP:
        return {"level": level, "max_processes": max_processes(level)}
    roots = [*hide, Path.home(), Path.cwd()]
    if not own_root:
        kept = sorted({*needed_paths(base), *(Path(os.path.realpath(k)) for k in keep)})
        return {
            "level": level,
            "hide": hide_targets(roots, kept),
            "writable": str(base),
            "uid_ok": nobody_can_reach([k for k in kept if k != base]),
        }
    allowed, links = allow_list(base, keep)
    # Only a hidden path inside an allowed folder is visible at all; an allowed folder inside
    # that one (a Python installation in the course) stays visible.
    inside = {os.path.realpath(r) for r in roots}
    inside = {r for r in inside if any(_under(r, a) and r != a for a in allowed)}
    within = [Path(a) for a in allowed if any(_under(a, r) for r in inside)]
    return {
        "level": level,
        "allow": allowed,
        "links": links,
        "hide": hide_targets([Path(r) for r in inside], within) if inside else [],
        "writable": str(base),
        "disk_mb": disk_mb,
        # in the worker's root the folders above an allowed one are its own (mode 0755)
        "uid_ok": all(readable_by_others(Path(a)) for a in allowed),
        "max_processes": max_processes(level),
    }
