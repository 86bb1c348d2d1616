"""Standard output that a closed pipe cannot break (`autograder grade ... | head -1`).

Python ignores SIGPIPE, so printing a table into a pipe whose reader has gone raises
BrokenPipeError, and click turns that into exit status 1 at once: the command stopped halfway
(`grade a b c | true` graded only a) and a grade whose tests all passed exited 1. Here the
first broken pipe points standard output at the null device (as Python's documentation advises
for SIGPIPE) and the command goes on; its exit status and stderr sentences stay its own.
"""

from __future__ import annotations

import os
from typing import Any, TextIO


class ClosedPipeTolerant:
    """Wraps a text stream: writes and flushes after its reader closed the pipe are dropped."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._drop()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()

    def _drop(self) -> None:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._stream.fileno())
            finally:
                os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def tolerate_closed_stdout() -> None:
    """From here on, sys.stdout survives a reader that closed the pipe (idempotent)."""
    import sys

    if sys.stdout is not None and not isinstance(sys.stdout, ClosedPipeTolerant):
        sys.stdout = ClosedPipeTolerant(sys.stdout)  # type: ignore[assignment]
