"""The batch command's own process stays light: it only starts the session process (which has
torch from its fork server), shows progress and writes the class report. Importing torch there
cost about 2 s before the session process could even start (benchmarks/README.md)."""

from __future__ import annotations

import sys

import pytest

from tests.processes import python_output

HEAVY = ("torch", "matplotlib")


@pytest.mark.parametrize("module", ["autograder.commands.grade_class", "autograder.commands.check"])
def test_importing_a_batch_command_imports_neither_torch_nor_matplotlib(module):
    probe = f"import sys, {module}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    imported = python_output(probe)
    assert imported == "[]", f"{module} imports {imported}"


# multiprocessing starts the fork server without waiting for its exec: until then, its
# /proc/PID/environ is this probe's environment as it was when the probe started.
PROBE_ZYGOTE_ADDRESS = """
import time
from multiprocessing import forkserver
from pathlib import Path
from autograder.cli.shared import warm_workers
with warm_workers(batch=True):
    pid = forkserver._forkserver._forkserver_pid  # private: the server started just now
    started = b"multiprocessing.forkserver import main"  # in its command line once it runs
    deadline = time.monotonic() + 60
    while started not in Path(f"/proc/{pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, "the fork server did not start"
        time.sleep(0.01)
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\\0")
    print(any(entry.startswith(b"AUTOGRADER_ZYGOTE=") for entry in environ))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_session_fork_server_knows_the_worker_fork_server():
    """grade-class starts the session's fork server before its own imports, but after the
    worker fork server: a session that does not inherit its address starts every learner's
    worker as a fresh interpreter (about 2 s each) instead of a fork."""
    assert python_output(PROBE_ZYGOTE_ADDRESS) == "True"


PROBE_FROZEN_HEAP = """
import gc
from autograder.batch import fork_server
with fork_server.start().Pool(1) as pool:
    print(pool.apply(gc.get_freeze_count))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a fork server needs Linux")
def test_the_session_fork_servers_heap_is_frozen():
    """A process forked from the session's fork server inherits a frozen heap: the server froze
    what it imported (warm_heap), so its exit does not collect torch's objects for 0.6 s after
    the command has ended."""
    assert int(python_output(PROBE_FROZEN_HEAP)) > 100_000
