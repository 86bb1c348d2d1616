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

import ctypes
import functools
import os
import re
import select
import shutil
import site
import subprocess
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

NAMESPACES = "namespaces"
USER_NAMESPACES = "user-namespaces"
PROCESS_GROUP = "process-group"
_UNSHARE = ("--pid", "--fork", "--kill-child", "--mount", "--mount-proc", "--net", "--ipc")
_UNSHARE_USER = ("--user", "--map-root-user")
MAX_HIDDEN = 500  # mount points per worker; a huge home folder is covered in one piece instead
NOBODY = 65534
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

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_FLAG_OF = {
    "nosuid": _MS_NOSUID,
    "nodev": _MS_NODEV,
    "noexec": _MS_NOEXEC,
    "noatime": 1024,
    "nodiratime": 2048,
    "relatime": 1 << 21,
}
_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 1, 24, 38
_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = (
    0x20000,
    0x10000000,
    0x20000000,
    1 << 30,
)
_CLONE_NEWIPC = 0x08000000
_CAP_VERSION_3 = 0x20080522
#: A private, empty /dev/shm per worker: POSIX shared memory (shm_open, multiprocessing's
#: SharedMemory) is files there, which the IPC namespace does not separate; /dev is not
#: remounted read-only, so without this one learner's worker could leave data for the next.
_SHM = "/dev/shm"
_SHM_OPTIONS = "size=64m,mode=1777"


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


# -- in a worker forked by the zygote: what the `unshare` prefix does for a fresh one -------------


def enter_namespaces(level: str) -> None:
    """Do in this (single-threaded, freshly forked) process what ``probe()``'s ``unshare`` prefix
    does for a fresh worker: new mount, PID, network and IPC namespaces (and a user namespace
    mapping this uid to root, for ``user-namespaces``), then fork. Returns only in the child,
    which is PID 1 of the new PID namespace with its own ``/proc``, and is killed when this
    process dies. This process waits for it and exits as it did (``--fork --kill-child``).
    Raises OSError when the kernel refuses a namespace (before any fork)."""
    if level == PROCESS_GROUP:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    flags = _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC
    uid, gid = os.getuid(), os.getgid()
    if level == USER_NAMESPACES:
        flags |= _CLONE_NEWUSER
    if libc.unshare(flags) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare: {os.strerror(errno)}")
    if level == USER_NAMESPACES:  # what `unshare --map-root-user` writes
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"0 {uid} 1"),
            ("gid_map", f"0 {gid} 1"),
        ):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as file:
                file.write(text)
    lifeline, held = os.pipe()  # EOF on lifeline: the parent is gone
    child = os.fork()
    if child == 0:
        libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)  # SIGKILL when the parent dies
        os.close(held)
        if select.select([lifeline], [], [], 0)[0]:
            os._exit(1)  # the parent died before the prctl: nobody would kill us
        os.close(lifeline)
        _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
        _mount(libc, "proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        return
    _wait_and_exit_like(child, keep=held)


def _wait_and_exit_like(child: int, keep: int) -> None:
    """Wait for child and end this process the same way (its exit code, or its signal)."""
    os.closerange(3, keep)  # the channel and the rest belong to the child
    os.closerange(keep + 1, 65536)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        import resource
        import signal

        signum = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


# -- inside the worker, before any learner code ---------------------------------------------------


def confine(plan: dict[str, Any]) -> dict[str, Any]:
    """Apply ``plan`` (from the harness) to this process; return what was applied.

    ``plan``: ``{"level", "hide": [paths], "writable": private base, "uid_ok": bool}``.
    """
    report: dict[str, Any] = {"level": plan.get("level", PROCESS_GROUP), "hidden": 0}
    if report["level"] == PROCESS_GROUP:
        return report
    try:  # PID 1 of the namespace leads its own session too (unshare's --kill-child ends it)
        os.setsid()
    except OSError:
        pass
    libc = ctypes.CDLL(None, use_errno=True)
    writable = plan["writable"]
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
    _mount(libc, writable, writable, None, _MS_BIND | _MS_REC)
    for target in plan["hide"]:
        if _cover(libc, target):
            report["hidden"] += 1
    if os.path.isdir(_SHM):
        shm_flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        report["private_shm"] = _mount(libc, "tmpfs", _SHM, "tmpfs", shm_flags, _SHM_OPTIONS)
    os.chdir(os.getcwd())  # onto the writable bind mount, not the folder it covers
    covered = set(plan["hide"])
    report["writable_mounts"] = _remount_read_only(libc, keep=writable, covered=covered)
    if plan.get("uid_ok") and os.getuid() == 0 and report["level"] == NAMESPACES:
        for dirpath, dirnames, filenames in os.walk(writable):
            for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                os.lchown(name, NOBODY, NOBODY)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    _drop_capabilities(libc)
    report["uid"] = os.getuid()
    return report


def _mount(
    libc: Any,
    source: str | None,
    target: str,
    fstype: str | None,
    flags: int,
    data: str | None = None,
) -> bool:
    def b(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    return libc.mount(b(source), b(target), b(fstype), flags, b(data)) == 0


def _cover(libc: Any, target: str) -> bool:
    """An empty read-only tmpfs over a folder; /dev/null over a file."""
    if os.path.isdir(target):
        flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        return _mount(libc, "tmpfs", target, "tmpfs", flags, "size=4k,mode=000")
    if os.path.lexists(target):
        if not _mount(libc, "/dev/null", target, None, _MS_BIND):
            return False
        return _mount(libc, None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
    return False


def _remount_read_only(libc: Any, *, keep: str, covered: set[str]) -> list[str]:
    """Every mount read-only except /proc, /dev, the covers (read-only already) and the worker's
    own writable folder; returns the mount points that could not be made read-only."""
    failed = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as info:
        lines = info.read().splitlines()
    for line in lines:
        fields = line.split()
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        if point in covered or point == keep or point.startswith((keep + "/", "/proc", "/dev")):
            continue
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
        for option in fields[5].split(","):
            flags |= _FLAG_OF.get(option, 0)
        if not _mount(libc, None, point, None, flags):
            failed.append(point)
    return failed


def _drop_capabilities(libc: Any) -> None:
    """Empty the bounding, effective, permitted and inheritable sets; no new privileges."""
    for cap in range(64):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    libc.capset(header, data)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


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
