"""One writer at a time per output folder: an flock(2) on DIR/.lock for the command's life.

Two commands writing one DIR (a grade-class started twice, a merge into a folder still being
graded) race: each clears DIR/.partial, where the other stages its learners, and rebuilds
gradebook.csv from records that are still changing. So the command that writes DIR holds an
exclusive lock on DIR/.lock (``hold``), and `merge` holds a shared one on each shard folder it
reads (``hold(..., shared=True)``): it never copies a shard that is still being graded.

The kernel drops a lock when its holder ends, however it ends (Ctrl-C, kill -9), so a lock
file left behind never blocks a rerun: what counts is whether a live process holds it, not
whether the file exists. Only the command's own process holds it: the batch's session process
comes from a fork server, not from the command, and does not share the descriptor. The file
names its holder (process id, command, start time) for the sentence a blocked command prints.

Without ``fcntl`` (Windows) nothing is locked. Source: the Linux man page flock(2).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from autograder.atomic_files import DISK_ERRORS

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux or macOS
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"
WRITING = (
    "{holder} is writing to {folder}; wait for it to finish (or stop it: a rerun resumes), or "
    "choose another --out."
)
SHARD_BUSY = (
    "The shard folder {folder} is still being written by {holder}; merge it once that run has "
    "finished."
)
CANNOT_LOCK = (
    "Could not open the lock file {path} ({why}); {command} writes in {folder} only while it "
    "holds that lock: make the folder writable by you, or choose another --out."
)
LINKED_LOCK = (
    "The lock file {path} is a symbolic link, which {command} does not follow; remove it and "
    "run again."
)
ODD_LOCK = (
    "The lock file {path} is not a regular file (a folder, a pipe or a device); {command} "
    "writes its lock there: remove it and run again."
)
HOLDER = "another autograder command ({command}, process {pid}, started {started})"
UNKNOWN_HOLDER = "another autograder command"


class LockError(Exception):
    """The folder cannot be locked; the message is the sentence to print."""


class FolderBusy(LockError):
    """Another live process holds the folder's lock; the message is the sentence to print."""


class Held:
    """A lock on one folder, released by ``release`` or at the end of a ``with`` block."""

    def __init__(self, fd: int | None) -> None:
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor drops the lock

    def __enter__(self) -> Held:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def hold(folder: Path, command: str, *, shared: bool = False) -> Held:
    """Lock ``folder`` (which must exist) for ``command`` ("grade-class", "merge").

    Exclusive: for the command that writes the folder; the lock file is made if missing.
    LockError when it cannot be opened (a folder of another user, a symbolic link); OSError
    for an error of the disk (a read-only file system), which the command line turns into its
    own sentence. ``shared``: for a command that
    only reads it; a folder without a lock file, or one it cannot open, was never written by
    a command that is still running, and is not locked. Raises FolderBusy, whose message names
    the holder, when another process holds an exclusive lock (or any lock, for an exclusive
    one)."""
    if fcntl is None:
        return Held(None)
    path = Path(folder) / LOCK_FILE
    if shared:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return Held(None)
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a pipe or a folder: no command's lock
            os.close(fd)
            return Held(None)
    else:
        fd = _open_exclusive(path, command)
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        if shared:
            raise FolderBusy(SHARD_BUSY.format(holder=holder, folder=folder)) from None
        holder = holder[0].upper() + holder[1:]
        raise FolderBusy(WRITING.format(holder=holder, folder=folder)) from None
    except BaseException:
        os.close(fd)
        raise
    if not shared:
        _name_holder(fd, command)
    return Held(fd)


def _open_exclusive(path: Path, command: str) -> int:
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as error:
        if error.errno in DISK_ERRORS:  # the command line says those (atomic_files.py)
            raise
        if error.errno == errno.ELOOP:
            raise LockError(LINKED_LOCK.format(path=path, command=command)) from None
        if error.errno == errno.EISDIR:
            raise LockError(ODD_LOCK.format(path=path, command=command)) from None
        why = error.strerror or str(error)
        folder = path.parent
        raise LockError(
            CANNOT_LOCK.format(path=path, why=why, command=command, folder=folder)
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a pipe or a device: not a file to write
        os.close(fd)
        raise LockError(ODD_LOCK.format(path=path, command=command))
    return fd


def _name_holder(fd: int, command: str) -> None:
    started = datetime.now(UTC).isoformat(timespec="seconds")
    text = json.dumps({"pid": os.getpid(), "command": command, "started": started}) + "\n"
    os.ftruncate(fd, 0)
    os.pwrite(fd, text.encode("utf-8"), 0)


def _holder(fd: int) -> str:
    """Who holds the lock, as the lock file says (written just after taking it, so it may
    still be empty). The file names the last command that wrote the folder: when that process
    has ended, the holder is another (a merge reading the folder), named by no file."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        pid = int(info["pid"])
        holder = HOLDER.format(command=str(info["command"]), pid=pid, started=info["started"])
    except (OSError, ValueError, TypeError, KeyError):
        return UNKNOWN_HOLDER
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return UNKNOWN_HOLDER
    except PermissionError:
        pass  # alive, another user's
    return holder
