"""Wall time and peak memory of a command's whole process tree, sampled from /proc."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_EVERY = 0.2  # seconds between memory samples, at least (see run_measured)


@dataclass
class Measure:
    """One command's wall time, its tree's peak memory, whether it ran, and why not."""

    seconds: float
    peak_mb: float
    ok: bool
    note: str = ""


def run_measured(command: list[str], cwd: Path, env: dict | None = None) -> Measure:
    """Run command; wall time and the peak memory (summed PSS) of its process tree."""
    start = time.monotonic()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        # Reading a process's smaps_rollup walks its page tables (~7 ms for one holding torch):
        # the sampler waits 20 times as long as its last sample took, so it uses at most ~5% of
        # one core and does not slow down the system with the most processes (ours) more than
        # the others.
        while not done.is_set():
            began = time.process_time()
            peak[0] = max(peak[0], tree_memory_mb(process.pid))
            done.wait(max(SAMPLE_EVERY, 20 * (time.process_time() - began)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    done.set()
    sampler.join()
    seconds = time.monotonic() - start
    note = "" if process.returncode in (0, 1) else err.strip().splitlines()[-1:]
    return Measure(seconds, peak[0], process.returncode in (0, 1), str(note or ""))


def tree_memory_mb(root: int) -> float:
    """Memory (MB) of root and its descendants, from /proc: the sum of each process's PSS
    (proportional set size: a page shared by k processes counts 1/k in each), so torch's pages,
    shared by a fork server and every process forked from it, count once in all. A process
    whose smaps_rollup cannot be read counts its RSS."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += _pss(pid, rss.get(pid, 0))
        stack.extend(children.get(pid, []))
    return total / 2**20


def _pss(pid: int, fallback: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return fallback
