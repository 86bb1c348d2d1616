"""Confining the worker from inside: namespaces, covers, read-only disk, no privileges, rlimits.

Runs in the worker (or the notebook runner) before any learner code, applying the plan the
harness computed (harness/isolation.py says what each level gives). ``enter_namespaces`` does in
a worker forked by the zygote what the ``unshare`` prefix does for a fresh worker.
"""

from __future__ import annotations

import ctypes
import os
import resource
import select
import signal
from typing import Any

from autograder.runtime.shared.confinement import NAMESPACES, NOBODY, PROCESS_GROUP, USER_NAMESPACES
from autograder.runtime.worker import new_root
from autograder.runtime.worker.mounts import (
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    cover,
    load_libc,
    mount,
    remount_all_read_only,
)

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
        mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
        mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
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
    """Apply ``plan`` (from the harness: harness/isolation.confinement_plan) to this process;
    return what was applied.

    ``plan``: ``{"level", "writable": private folder, "uid_ok": bool, "hide": [paths]}``, and
    for a root of its own (new_root.py) ``"allow": [paths], "links": {path: target},
    "disk_mb"``; without ``allow`` the host's root stays, with ``hide`` covered and every
    other file system read-only.
    """
    report: dict[str, Any] = {"level": plan.get("level", PROCESS_GROUP), "hidden": 0}
    if plan.get("max_processes"):  # counted for the kernel's real uid, also in a namespace
        _lower_limit(resource.RLIMIT_NPROC, int(plan["max_processes"]))
    if report["level"] == PROCESS_GROUP:
        return report
    try:  # PID 1 of the namespace leads its own session too (unshare's --kill-child ends it)
        os.setsid()
    except OSError:
        pass
    libc = load_libc()
    writable = plan["writable"]
    become_nobody = bool(plan.get("uid_ok")) and os.getuid() == 0 and report["level"] == NAMESPACES
    mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    if plan.get("allow") is not None:
        owner = NOBODY if become_nobody else None
        report.update(new_root.enter(libc, {**plan, "owner": owner}))
        report["root"] = "allow-list"
        private = os.path.join(writable, "root") if report["disk_mb"] else writable
    else:
        report.update(_cover_host_root(libc, plan))
        private = writable
    if become_nobody:
        _give_to_nobody(private)
    if report.get("disk_mb"):  # the copy of the package is the source the check read
        new_root.seal_copies(libc, private, report)
    if become_nobody:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        # A change of uid clears the parent-death signal that makes PID 1 of the namespace (and
        # so everything learner code starts) die with its parent (unshare's --kill-child,
        # enter_namespaces): set it again, or a worker the harness killed would live on.
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _drop_capabilities(libc)
    report["uid"] = os.getuid()
    return report


def _give_to_nobody(folder: str) -> None:
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            os.lchown(name, NOBODY, NOBODY)


def _cover_host_root(libc: Any, plan: dict[str, Any]) -> dict[str, Any]:
    """The host's root, with ``hide`` covered by empty read-only mounts, a private /dev/shm,
    and every file system read-only except the private folder."""
    writable = plan["writable"]
    report: dict[str, Any] = {"hidden": 0}
    mount(libc, writable, writable, None, MS_BIND | MS_REC)
    for target in plan["hide"]:
        if cover(libc, target):
            report["hidden"] += 1
    if os.path.isdir(_SHM):
        shm_flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
        report["private_shm"] = mount(libc, "tmpfs", _SHM, "tmpfs", shm_flags, _SHM_OPTIONS)
    os.chdir(os.getcwd())  # onto the writable bind mount, not the folder it covers
    covered = set(plan["hide"])
    report["writable_mounts"] = remount_all_read_only(libc, keep=writable, covered=covered)
    return report


def _drop_capabilities(libc: Any) -> None:
    """Empty the bounding, effective, permitted and inheritable sets; no new privileges."""
    for cap in range(64):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    libc.capset(header, data)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


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
