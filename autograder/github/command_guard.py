"""Output that no text can turn into a CI workflow command.

When the output is not a terminal, every line a command writes goes through CommandSafe, which
puts `> ` in front of a line that a GitHub Actions runner would read as a command (`::`,
`##[`, `##vso[`, after blanks) and reads a lone carriage return as the line break the runner
takes it for. The one writer of real commands (github/actions_run.py) writes to
`commands_stream`, under it.

Proof: tests/hostile/test_log_text.py (SECURITY.md, "Roster or learner text in a CI log").
Design: docs/internals/gradebook.md#output-no-text-turns-into-a-workflow-command.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

_BREAK = re.compile(r"(\r\n|\n|\r)")
_COMMAND = re.compile(r"(\s*)(::|##\[|##vso\[)", re.IGNORECASE)
#: Starts of a line that may still become a command once more text comes.
_MAYBE = re.compile(r"\s*(:|#|##|##v|##vs|##vso)?", re.IGNORECASE)


class CommandSafe:
    """Wraps a text stream: no line written through it starts a CI workflow command (see the
    module docstring); everything else passes unchanged. ``commands`` is the stream under it."""

    def __init__(self, stream: TextIO) -> None:
        self.commands = stream
        self._head = ""  # the start of the current line, until it is known not to be a command
        self._open = False  # the current line's start is written

    def write(self, text: str) -> int:
        out = []
        for part in _BREAK.split(text):
            if not part:
                continue
            if _BREAK.fullmatch(part):
                out += [self._release(), part]
                self._open = False
            elif self._open:
                out.append(part)
            else:
                self._head += part
                if not _MAYBE.fullmatch(self._head):
                    out.append(self._release())
        if out:
            self.commands.write("".join(out))
        return len(text)

    def _release(self) -> str:
        """The line's start as written: `> ` before a command, or before what could become
        one (a flush while it is undecided)."""
        head, self._head = self._head, ""
        self._open = bool(head)
        undecided = _MAYBE.fullmatch(head) and head.strip()
        if _COMMAND.match(head) or undecided:
            blanks = len(head) - len(head.lstrip())
            return f"{head[:blanks]}> {head[blanks:]}"
        return head

    def flush(self) -> None:
        if self._head.strip():  # blanks alone decide nothing: they stay until more text comes
            self.commands.write(self._release())
        self.commands.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.commands, name)


def commands_stream(stream: TextIO) -> TextIO:
    """The stream under ``stream``'s CommandSafe, where real workflow commands are written."""
    return stream.commands if isinstance(stream, CommandSafe) else stream


def no_workflow_commands() -> None:
    """From here on, sys.stdout and sys.stderr neutralise workflow commands when they are not
    terminals (a CI log, a pipe, a file); idempotent."""
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or isinstance(stream, CommandSafe):
            continue
        try:
            terminal = stream.isatty()
        except (AttributeError, ValueError):
            terminal = False
        if not terminal:
            setattr(sys, name, CommandSafe(stream))
