"""Process utilities of a batch: ending with the command, checking a process, removing scratch."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

BAD_JOBS = "--jobs must be a whole number of at least 1; got {value}."
PARENT_POLL = 1.0  # seconds between checks that the batch command is still alive
REMOVE_PATIENCE = 5.0  # seconds to keep removing a temporary folder that is still written in


def jobs_or_cores(jobs: int | None) -> int:
    """--jobs, or one per core when it is not given; OptionError when it is below 1."""
    from autograder.config import OptionError

    jobs = jobs if jobs is not None else os.cpu_count() or 1
    if jobs < 1:
        raise OptionError(BAD_JOBS.format(value=jobs))
    return jobs


def exit_with_parent(
    parent_pid: int,
    before_exit: Callable[[], None] | None = None,
    *,
    ppid: int | None = None,
) -> None:
    """A daemon thread that ends this process once the batch command is gone (after
    ``before_exit``, if given), or, with ``ppid``, once this process's parent is no longer
    that one (the session process that forked a harness child was killed)."""

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL)
            if not process_alive(parent_pid) or (ppid is not None and os.getppid() != ppid):
                try:
                    if before_exit is not None:
                        before_exit()
                finally:
                    os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def process_alive(pid: int) -> bool:
    """Whether process `pid` still runs. A killed process whose parent has not collected it
    yet (a zombie: `subprocess.run` reaps only once every pipe is closed) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust the signal check
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def remove_folder(folder: Path, patience: float = REMOVE_PATIENCE) -> None:
    """Remove ``folder`` and all in it, trying again for up to ``patience`` seconds while it
    is still there: a process that is ending (a killed learner's worker, still writing in its
    private copy) can add a file while the tree is removed, and the last rmdir then fails."""
    deadline = time.monotonic() + patience
    while True:
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.lexists(folder) or time.monotonic() >= deadline:
            return
        time.sleep(0.05)
