"""The worker's own root file system: an allow-list of the host's, nothing else.

Built in the worker's private mount namespace before any learner code runs, from the plan the
harness computed (harness/isolation.confinement_plan):

* a small tmpfs becomes ``/``: it holds only the mount points below, and is read-only once built;
* each allowed path (the Python installation and its packages, the system's programs and
  libraries, a few files of /etc that the dynamic loader and the clock read, the CPU
  description in /sys) is bind-mounted read-only at its own path; ``/bin``, ``/lib``... are the
  host's symbolic links where the host has links;
* ``/dev`` holds null, zero, full, random and urandom, the ``fd``/``stdin``/... links and an
  empty private ``/dev/shm``; ``/proc`` is the worker's own (its PID namespace's);
* the worker's private folder is bind-mounted read-only, and its private root (HOME, TMPDIR,
  cwd) is a fresh tmpfs of ``disk_mb`` MiB and a proportional number of files: everything
  learner code writes counts against that quota; the copy of the package in it is read-only
  (the source the static check read is the source that runs);
* then ``pivot_root`` makes it the root, and the host's root is detached: no path leads back.

What is not on the list does not exist for learner code: other checkouts of the course, /home,
/root, the host's /tmp (other workers' copies, other batches' caches), /etc/passwd and the rest.
"""

from __future__ import annotations

import os
import platform
import shutil
from typing import Any

from autograder.runtime.shared.confinement import FILES_PER_MB
from autograder.runtime.worker.mounts import (
    MNT_DETACH,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    cover,
    libc_call,
    mount,
    remount_read_only,
)

#: Device files a program may open; each a bind of the host's node (mknod needs privileges).
DEVICES = ("null", "zero", "full", "random", "urandom")
DEVICE_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}
#: A private, empty /dev/shm: POSIX shared memory (shm_open, multiprocessing's SharedMemory) is
#: files there, which the IPC namespace does not separate.
SHM_OPTIONS = "size=64m,mode=1777"
ROOT_OPTIONS = "size=1m,nr_inodes=4096,mode=0755"
NEW_ROOT = ".newroot"  # in the private folder: where the root is built before pivot_root
#: pivot_root(2) has no wrapper in Python or glibc; its system call number per architecture.
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}


def enter(libc: Any, plan: dict[str, Any]) -> dict[str, Any]:
    """Build the root of ``plan`` and make it this process's root; return what was done:
    ``allowed`` (paths bound), ``hidden`` (paths covered inside them), ``writable_mounts`` (binds
    that stayed writable: none, unless the kernel refused), ``disk_mb``, ``private_shm``."""
    writable = plan["writable"]
    new = os.path.join(writable, NEW_ROOT)
    os.mkdir(new, 0o755)
    if not mount(libc, "tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, ROOT_OPTIONS):
        raise OSError(f"Could not mount the worker's root file system at {new}.")
    report: dict[str, Any] = {"allowed": 0, "hidden": 0, "writable_mounts": []}
    for path in plan["allow"]:
        if _bind(libc, path, new + path, report):
            report["allowed"] += 1
    for name, target in plan.get("links", {}).items():
        os.symlink(target, new + name)
    report["private_shm"] = _devices(libc, new)
    _proc(libc, new)
    if plan.get("owner") is not None:  # nobody must enter the private folder (mode 0700)
        os.chown(writable, plan["owner"], plan["owner"])
    _bind(libc, writable, new + writable, report)
    report["disk_mb"] = _private_root(libc, plan, new + writable)
    for target in plan.get("hide", ()):
        report["hidden"] += int(cover(libc, new + target))
    os.makedirs(new + "/tmp", exist_ok=True)
    cwd = os.getcwd()
    _pivot(libc, new)
    mount(libc, None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(cwd)
    return report


def _bind(libc: Any, source: str, target: str, report: dict[str, Any]) -> bool:
    """Bind ``source`` (a folder or a file) read-only at ``target``; False when it is gone."""
    if not os.path.exists(source):
        return False
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "a"):
            pass
    if not mount(libc, source, target, None, MS_BIND | MS_REC):
        raise OSError(f"Could not make {source} visible to the worker.")
    if not remount_read_only(libc, target, os.statvfs(source).f_flag):
        report["writable_mounts"].append(source)
    return True


def _devices(libc: Any, new: str) -> bool:
    """The minimal /dev; whether its private /dev/shm could be mounted."""
    dev = new + "/dev"
    os.makedirs(dev, exist_ok=True)
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            with open(f"{dev}/{name}", "a"):
                pass
            mount(libc, f"/dev/{name}", f"{dev}/{name}", None, MS_BIND)
    for name, target in DEVICE_LINKS.items():
        os.symlink(target, f"{dev}/{name}")
    os.mkdir(f"{dev}/shm")
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    return mount(libc, "tmpfs", f"{dev}/shm", "tmpfs", flags, SHM_OPTIONS)


def _proc(libc: Any, new: str) -> None:
    """This PID namespace's /proc (mounted by ``unshare --mount-proc`` or enter_namespaces)."""
    os.makedirs(new + "/proc", exist_ok=True)
    if not mount(libc, "/proc", new + "/proc", None, MS_BIND | MS_REC):
        raise OSError("Could not give the worker its /proc.")


def _private_root(libc: Any, plan: dict[str, Any], folder: str) -> int:
    """The private root, writable: a tmpfs of ``disk_mb`` MiB holding a copy of what it held;
    the rest of the private folder stays read-only. Without a quota (or a private folder with
    no ``root``: the notebook runner's), the whole private folder is writable. Returns the
    quota in MiB (0: none)."""
    disk_mb = int(plan.get("disk_mb") or 0)
    root = os.path.join(plan["writable"], "root")
    if disk_mb <= 0 or not os.path.isdir(root):  # no quota: the whole folder is writable
        if not mount(libc, plan["writable"], folder, None, MS_BIND):
            raise OSError("Could not give the worker its private folder.")
        return 0
    options = f"size={disk_mb}m,nr_inodes={max(disk_mb * FILES_PER_MB, 4096)},mode=0700"
    if plan.get("owner") is not None:
        options += f",uid={plan['owner']},gid={plan['owner']}"
    target = folder + "/root"
    if not mount(libc, "tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options):
        raise OSError("Could not mount the worker's private root with its disk quota.")
    shutil.copytree(root, target, dirs_exist_ok=True, symlinks=True)
    return disk_mb


def seal_copies(libc: Any, root: str, report: dict[str, Any]) -> None:
    """Bind each folder of the private root ``root`` (the copy of the package: the source the
    static check read) read-only onto itself, once the root is built and its owner set:
    learner code that rewrote a module the harness imports later, or wrote one beside them,
    would run code no check read. The rest of the private root (HOME, TMPDIR) stays
    writable."""
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if entry.is_dir(follow_symlinks=False):
            _bind(libc, entry.path, entry.path, report)


def _pivot(libc: Any, new: str) -> None:
    """Make ``new`` the root and detach the old one; chroot where pivot_root cannot be used
    (a root that is not a mount point, an unknown architecture). Either way, without
    capabilities (dropped next) there is no way back to the host's root."""
    os.chdir(new)
    number = _SYS_PIVOT_ROOT.get(platform.machine())
    if number is not None and libc.syscall(number, b".", b".") == 0:
        libc_call(libc.umount2, b".", MNT_DETACH)
    else:
        os.chroot(".")
    os.chdir("/")
