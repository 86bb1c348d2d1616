"""Where learner code was when the harness stopped a call that ran out of time.

Before it kills a worker whose call ran out of time, the harness asks the worker's process for
its Python stack (STACK_SIGNAL): the worker registered faulthandler for that signal before any
learner code ran (worker/serve.py), so the stack lands in the capture file the worker's output
goes to. The harness reads what came after the output so far and cuts it off again (it is not
the learner's output).

The sentence names the innermost frame in a file of the learner's package whose line that file
has: "assignments/t101/encoder.py:31 in forward" (in a hidden test, or while the
worker's output is withheld, the file alone, and only one of the course's module files).

Everything the worker writes is the learner's: a stack it forges, or none at all (it may unset
the handler), can only change one sentence of its own feedback. No score depends on it.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path, PurePosixPath

from autograder.learner_files import TooLarge, read_file
from autograder.runtime.harness.worker_handle import WorkerHandle
from autograder.runtime.shared.errors import LearnerError
from autograder.runtime.shared.messages import STOPPED_AT

STACK_SIGNAL = signal.SIGUSR2
#: Seconds the harness waits at most for the stack, and for its writing to end.
WAIT, SETTLE = 0.5, 0.02
#: Bytes of the stack read at most (faulthandler writes at most 100 frames a thread).
MAX_STACK_BYTES = 1 << 16
#: A learner file read at most this far to check that it has the line.
MAX_FILE_BYTES = 1 << 20

_CURRENT = re.compile(r"^Current thread 0x[0-9a-f]+ \(most recent call first\):$", re.M)
#: A frame as faulthandler writes it: a path in printable ASCII (it escapes any other
#: character), a line of 1 to 9 ASCII digits. A forged path holding a NUL byte, or a line of
#: 5,000 digits, raised ValueError, and the learner's time-out became the grader's error.
_FRAME = re.compile(r'^  File "(?P<path>[ !#-~]+)", line (?P<line>[0-9]{1,9}) in (?P<function>.*)$')
_FUNCTION = re.compile(r"<?[A-Za-z_]\w*>?")


def ask(worker: WorkerHandle) -> bytes:
    """The stack the worker's processes wrote when asked (b"" when none came in time); the
    capture file is left as it was before."""
    capture = worker.capture_fd
    try:
        before = os.fstat(capture).st_size
    except OSError:
        return b""
    own = worker.own_pids - {worker.process.pid} or {worker.process.pid}
    for pid in own:  # the Python worker: the outer process only waits (confine.py)
        try:
            os.kill(pid, STACK_SIGNAL)
        except OSError:
            pass
    size, changed, deadline = before, time.monotonic(), time.monotonic() + WAIT
    try:
        while time.monotonic() < deadline:
            time.sleep(SETTLE)
            now = os.fstat(capture).st_size
            if now != size:
                size, changed = now, time.monotonic()
            elif size > before and time.monotonic() - changed >= SETTLE:
                break
        # the worker may have truncated its output below where the stack would start
        stack = os.pread(capture, min(max(size - before, 0), MAX_STACK_BYTES), before)
        os.ftruncate(capture, before)
    except (OSError, ValueError):
        return b""
    return stack


def place(stack: bytes, package: str, package_dir: Path, display_dir: str) -> tuple[str, str]:
    """(file, place) of the innermost frame of the stack's current thread in a file of the
    package: ("assignments/t101/encoder.py", "assignments/t101/encoder.py:31 in forward"), or
    ("", "") when it names none (or a line its file does not have)."""
    text = stack.decode("utf-8", "replace")
    found = _CURRENT.search(text)
    if found is None:
        return "", ""
    for line in text[found.end() + 1 :].splitlines():
        frame = _FRAME.match(line)
        if frame is None:
            break  # the end of the current thread's frames
        relative = _in_package(frame["path"], package)
        if relative and _has_line(package_dir, relative, int(frame["line"])):
            file = f"{display_dir}/{relative}"
            function = frame["function"].strip()
            named = f" in {function}" if _FUNCTION.fullmatch(function) else ""
            return file, f"{file}:{int(frame['line'])}{named}"
    return "", ""


def told(
    error: LearnerError,
    stack: bytes,
    package_dir: Path,
    package: str,
    display_dir: str,
    *,
    hidden: bool,
    files: frozenset[str],
) -> LearnerError:
    """``error`` (a time-out) with the sentence naming where the ``stack`` was stopped, if it
    names a place: its line in a visible test, the file alone in a ``hidden`` one (and only one
    of the course's module ``files``)."""
    file, where = place(stack, package, package_dir, display_dir)
    if hidden:
        where = file if file in files else ""
    if not where:
        return error
    sentence = f"{error.feedback} {STOPPED_AT.format(where=where)}"
    return LearnerError(error.kind, sentence, message=error.message)


def _in_package(path: str, package: str) -> str:
    """The path relative to the package of a frame's file inside it, else ""."""
    parts = PurePosixPath(path).parts
    found = [i for i, part in enumerate(parts[:-1]) if part == package]
    if not found:
        return ""
    relative = parts[found[-1] + 1 :]
    if any(p in ("", ".", "..") for p in relative) or not relative[-1].endswith(".py"):
        return ""
    return "/".join(relative)


def _has_line(package_dir: Path, relative: str, line: int) -> bool:
    """Whether the learner's file ``relative`` to the package, a regular file read through no
    link (learner_files), has that many lines within its first MAX_FILE_BYTES."""
    if line < 1:
        return False
    try:
        text = read_file(package_dir, relative, max_bytes=MAX_FILE_BYTES)
    except (OSError, ValueError, TooLarge):  # ValueError: a NUL byte in the path
        return False
    return len(text.splitlines()) >= line
