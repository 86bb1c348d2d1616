"""The processes running on this machine, read from Linux's /proc, for the tests that check
that nothing a command started is left running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def running_with(marker: str) -> dict[int, str]:
    """The live processes (not zombies, not this one) whose command line holds marker: process
    id to command line (arguments joined by spaces). A process that has just been exec'd may
    not show yet: its command line reads empty until the kernel has set the new program up."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):  # ended meanwhile
            continue
        if state not in ("Z", "X") and marker.encode() in cmdline:
            found[int(entry.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace")
    return found


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def cmdline(pid: int) -> str:
    """A process's command line, arguments joined by spaces ("" once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def session_pid(command: int) -> int | None:
    """The batch's session process: the forkserver's child under the command."""
    for server in children(command):
        if "multiprocessing.forkserver" in cmdline(server):
            sessions = children(server)
            if sessions:
                return sessions[0]
    return None


def python_output(source: str, timeout: float = 120) -> str:
    """What a fresh interpreter running ``source`` prints (stripped); its failure, with its
    stderr, fails the test."""
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
