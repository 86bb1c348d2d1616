"""The warm fork server that a batch's session process (batch/session_process.py) is forked from.

It imports numpy, torch, pytest and the framework once (about 3 s on this course's machine);
the session process then only collects the graders. `grade-class` and `check` start it first
thing, before their own imports and argument checks, because everything a batch does waits for
it: started at 0.8 s into the command, it made a one-learner batch wait that much longer.
Starting it again is a no-op. A command that then stops on a bad argument leaves it to finish
its imports and exit on its own (it ends when the command's process does).

Its last import, warm_heap, freezes its heap, so that its exit does not collect it.
"""

from __future__ import annotations

import multiprocessing
import signal
from multiprocessing import forkserver
from multiprocessing.context import ForkServerContext

# Imported once by the fork server: libraries, pytest and the framework (the session then
# collects the course's graders itself).
WARM_MODULES = [
    "numpy",
    "numpy.ma",  # numpy loads these two lazily: in every learner's child, but for this
    "numpy.random",
    "torch",
    "pytest",
    "autograder.pytest_plugin",
    "autograder.grading.one_submission",
    "autograder.batch.session_process",
    "autograder.batch.harness_pool",
    "autograder.runtime.harness.learner_session",
    "autograder.runtime.harness.zygote_client",
    "autograder.batch.warm_heap",  # last: freezes the heap the modules above made
]


def start() -> ForkServerContext:
    """The forkserver context, its server running (started now if it was not)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(WARM_MODULES)
    # The fork server imports torch for seconds; a Ctrl-C meant for this command must not
    # interrupt it with a traceback of its own (a disposition of SIG_IGN survives its exec).
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)
    return context
