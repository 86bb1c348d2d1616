"""Workflow commands (`::error file=...::message`) with GitHub's escaping.

The runner reads a line of a step's output that starts with `::` as a command. Its message
(data) escapes `%`, CR and LF as `%25`, `%0D`, `%0A`; its properties also escape `:` and `,`.
Escaping `%` first is what keeps a learner's literal `%0A` from turning into a line break
inside our own annotation. Learner text reaches these functions already sanitised
(learner_text.for_log); the escaping here is about the command's syntax.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Literal

Level = Literal["error", "warning", "notice"]


def escape_data(text: str) -> str:
    """A command's message: % CR LF escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command property's value (file, title): % CR LF : , escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotation:
    """One annotation on a file and line of the learner's repository."""

    level: Level
    message: str
    file: str = ""
    line: int = 0
    title: str = ""

    def command(self) -> str:
        """The workflow command line that creates this annotation."""
        props = []
        if self.file:
            props.append(f"file={escape_property(self.file)}")
        if self.line > 0:
            props.append(f"line={self.line}")
        if self.title:
            props.append(f"title={escape_property(self.title)}")
        head = f"::{self.level} {','.join(props)}" if props else f"::{self.level}"
        return f"{head}::{escape_data(self.message)}"


def new_stop_token() -> str:
    """A token nobody can guess, for `::stop-commands::TOKEN` ... `::TOKEN::`."""
    return secrets.token_hex(16)


def stop_commands(token: str) -> str:
    """The line after which the runner ignores workflow commands until resume_commands."""
    return f"::stop-commands::{token}"


def resume_commands(token: str) -> str:
    return f"::{token}::"
