"""The mount(2) calls the worker makes on itself, through libc (Python has no wrapper).

Flag values are those of <sys/mount.h> on Linux. In a user namespace the kernel refuses to
clear the flags a mount was made with (nosuid, nodev, noexec, the atime flags): a read-only
remount therefore repeats them.
"""

from __future__ import annotations

import ctypes
import os
import re
from typing import Any

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
_FLAG_OF = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
}
#: os.statvfs's f_flag bits that are also mount flags, and ST_RELATIME (4096).
_KEPT_STATVFS = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME
_ST_RELATIME = 4096


def load_libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def mount(
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


def libc_call(function: Any, *args: Any) -> None:
    """Call a libc function that returns -1 and sets errno on failure; raise OSError then."""
    if function(*args) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def remount_read_only(libc: Any, target: str, statvfs_flags: int) -> bool:
    """Make the bind mount at ``target`` read-only, keeping the flags (``os.statvfs`` f_flag of
    its source) that a user namespace would not let it drop."""
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | (statvfs_flags & _KEPT_STATVFS)
    if statvfs_flags & _ST_RELATIME:
        flags |= MS_RELATIME
    return mount(libc, None, target, None, flags)


def cover(libc: Any, target: str) -> bool:
    """An empty read-only tmpfs over a folder; /dev/null over a file."""
    if os.path.isdir(target):
        flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
        return mount(libc, "tmpfs", target, "tmpfs", flags, "size=4k,mode=000")
    if os.path.lexists(target):
        if not mount(libc, "/dev/null", target, None, MS_BIND):
            return False
        return mount(libc, None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    return False


def remount_all_read_only(libc: Any, *, keep: str, covered: set[str]) -> list[str]:
    """Every mount read-only except /proc, /dev, the covers (read-only already) and the folder
    ``keep``; returns the mount points that could not be made read-only."""
    failed = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as info:
        lines = info.read().splitlines()
    for line in lines:
        fields = line.split()
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        if point in covered or point == keep or point.startswith((keep + "/", "/proc", "/dev")):
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for option in fields[5].split(","):
            flags |= _FLAG_OF.get(option, 0)
        if not mount(libc, None, point, None, flags):
            failed.append(point)
    return failed
