"""Turning an exception raised by learner code into the fields of a LearnerError (in the worker).

Only frames whose file lies under the private root are shown, and each is named as the
learner's repository names it (``assignments/t101/attention.py``: ``shown_dir``, the package
folder as shown, in place of the private copy's folder), so the learner can open it; the worker's
and the libraries' frames never reach the learner.
"""

from __future__ import annotations

import errno
import linecache
import os
import traceback
from types import TracebackType
from typing import Any

from autograder.runtime.shared import messages

EXIT_TYPES = (SystemExit, KeyboardInterrupt, GeneratorExit)
_ALLOC_FAILED = "can't allocate memory"  # torch's CPU allocator raises RuntimeError with this


def classify(exc: BaseException, phase: str) -> str:
    """The LearnerError kind of an exception raised while importing ("import") or calling."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "disk"  # the private root's quota (worker/new_root.py)
    if isinstance(exc, SyntaxError) and phase == "import":
        return "syntax_error"
    if isinstance(exc, NotImplementedError):
        return "not_implemented"
    if isinstance(exc, EXIT_TYPES):
        return "exit"
    if isinstance(exc, MemoryError) or (
        isinstance(exc, RuntimeError) and _ALLOC_FAILED in _safe_str(exc)
    ):
        return "memory"
    return "import_error" if phase == "import" else "exception"


def relative(filename: str, root: str) -> str | None:
    """``/tmp/x/root/t101/a.py`` -> ``t101/a.py``; None for files outside the private root."""
    prefix = root.rstrip(os.sep) + os.sep
    if not filename.startswith(prefix):
        return None
    return filename[len(prefix) :].replace(os.sep, "/")


def shown_path(path: str, shown_dir: str) -> str:
    """A path relative to the private root (``t101/softmax.py``: the package folder, then the
    file) as the learner's repository names it: ``shown_dir`` in place of the package folder
    (``assignments/t101/softmax.py``). Unchanged when ``shown_dir`` is empty."""
    folder = shown_dir.rstrip("/")
    rest = path.partition("/")[2]
    if not folder or not rest:
        return path
    return f"{folder}/{rest}"


def learner_frames(tb: TracebackType | None, root: str) -> list[tuple[str, int, str]]:
    """(file relative to root, line, function) of each learner frame, outermost first."""
    frames = []
    for frame, line in traceback.walk_tb(tb):
        inside = relative(frame.f_code.co_filename, root)
        if inside is not None:
            frames.append((inside, line, frame.f_code.co_name))
    return frames


def describe(
    exc: BaseException,
    *,
    phase: str,
    root: str,
    memory_mb: int,
    shown_dir: str = "",
    disk_mb: int = 0,
) -> dict[str, Any]:
    """The error fields for ``exc``; ``feedback`` is left for the caller to compose, except for
    syntax errors, whose sentence needs no call. Learner files are named with ``shown_dir`` (the
    package folder as the learner's repository names it, e.g. "assignments/t101") in place of
    the private copy's folder; "" keeps them relative to the private root (``t101/a.py``)."""
    kind = classify(exc, phase)
    message = messages.sanitize(_safe_str(exc))
    frames = learner_frames(exc.__traceback__, root)
    shown = [(shown_path(inside, shown_dir), line, function) for inside, line, function in frames]
    location = f"{shown[-1][0]}:{shown[-1][1]} in {shown[-1][2]}" if shown else ""
    lines = []
    for (inside, line, function), (file, _, _) in zip(frames, shown, strict=True):
        lines.append(f'  File "{file}", line {line}, in {function}')
        source = linecache.getline(os.path.join(root, inside), line).strip()
        if source:
            lines.append(f"    {source}")
    error: dict[str, Any] = {
        "kind": kind,
        "exc_type": type(exc).__name__,
        "exc_mro": [cls.__name__ for cls in type(exc).__mro__],
        "message": message,
        "location": location,
        "traceback": "",
    }
    if kind == "syntax_error":
        assert isinstance(exc, SyntaxError)
        inside = relative(exc.filename or "", root)
        file = shown_path(inside, shown_dir) if inside else os.path.basename(exc.filename or "?")
        line = exc.lineno or 0
        error["message"] = messages.sanitize(str(exc.msg))
        error["location"] = f"{file}:{line}"
        text = messages.sanitize((exc.text or "").strip(), cap=200)
        error["traceback"] = f'  File "{file}", line {line}\n    {text}\nSyntaxError: {exc.msg}'
        error["feedback"] = messages.SYNTAX_ERROR.format(
            file=file, line=line, message=error["message"]
        )
        return error
    lines.append(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)
    error["traceback"] = "\n".join(lines)
    error["memory_mb"] = memory_mb
    error["disk_mb"] = disk_mb
    return error


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<the {type(exc).__name__} could not be shown as text>"
