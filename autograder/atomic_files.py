"""Files written whole or not at all, and the one sentence for a disk that cannot take them.

Every file another process or a later run reads (a submission's reports, a learner's record,
the gradebook and class report, expected values, a release) is written to a temporary file in
its own folder, then renamed over the old one: a reader never sees half a file, and a failed
write leaves the old file as it was.

The file gets the permissions of any new file of the user (0666 less the umask), as grader.log
does, not mkstemp's private 0600; an instructor who wants them private sets the umask or the
folder's permissions. cannot_write says a full disk or an output path that cannot be written
in one sentence, for every command.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

#: Errors of the disk, not of the command: a full disk, a quota, a read-only file system.
DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})
CANNOT_WRITE = (
    "Could not write{where}: {why}. Free some space or choose another output folder, then run "
    "the same command again; the files written before this one are complete and kept."
)


#: Errors of the output path given: a file where a folder must be, or a folder where a file.
PATH_ERRORS = frozenset({errno.ENOTDIR, errno.EISDIR})
CANNOT_WRITE_THERE = (
    "Could not write{where}: {why}. Choose an output folder you can write in (not one inside a "
    "file), then run the same command again."
)


def cannot_write(error: OSError) -> str | None:
    """The one sentence for an error of the disk (DISK_ERRORS) or of the output path
    (PATH_ERRORS), naming the file when known; None for any other error. Every command
    (cli/group.py) and the grade-class session process say this instead of a traceback: reports and
    gradebook rows are written whole or not at all."""
    if error.errno not in DISK_ERRORS and error.errno not in PATH_ERRORS:
        return None
    where = f" {error.filename}" if error.filename else ""
    template = CANNOT_WRITE if error.errno in DISK_ERRORS else CANNOT_WRITE_THERE
    return template.format(where=where, why=error.strerror)


def atomic_write_text(path: Path, text: str) -> Path:
    """Write text (UTF-8) to path through a temporary file in the same folder and a rename."""
    if not isinstance(text, str):
        raise TypeError(f"atomic_write_text writes a str to {path}, not {type(text).__name__}.")
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Write data to path through a temporary file in the same folder and a rename. The
    temporary file is named ".NAME.XXXXXXXX", so a reader listing files by NAME's suffix (as
    expected.py lists "*.entry") never sees it; on any failure it is removed and the old file,
    if any, is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(handle, 0o666 & ~current_umask())
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def current_umask() -> int:
    """This process's umask, read without changing it where Linux shows it (setting it to read
    it back would, for a moment, apply to files other threads create)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask
