"""Writing report files atomically, so a reader never sees half a report.

A report gets the permissions any new file of the user gets (0666 less the umask), as
grader.log and the figure beside it do: a temporary file is made private (0600), and kept so,
the reports of one folder differed in who may read them (TAs on a shared machine could read the
log but not the results). An instructor who wants them private sets the umask or the folder's
permissions."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> Path:
    """Write text (UTF-8) to path through a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(handle, 0o666 & ~current_umask())
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
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
