"""Neutralising learner text (messages, captured output) before it lands in a report.

Learner code controls what it prints and what its exceptions say. Before such text reaches a
terminal, a Markdown page, an XML file or Gradescope it goes through here: escape sequences and
control characters are stripped (so output cannot move the cursor, recolour a terminal or break
XML), long text is capped, and Markdown gets its own escaping.
"""

from __future__ import annotations

import re

#: Characters kept from learner output by default (about one screen of text).
OUTPUT_LIMIT = 4000
CUT_NOTE = "\n… ({count} more characters cut)"

# ANSI/VT escape sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), other 2-byte ESC x.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
# C0 controls except tab and newline, DEL, C1 controls, bidi overrides and isolates.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def strip_control(text: str) -> str:
    """text without escape sequences or control characters; CRLF and CR become newlines."""
    text = _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", text)


def cap(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """text cut to at most limit characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + CUT_NOTE.format(count=len(text) - limit)


def clean(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """strip_control then cap: the form every report stores."""
    return cap(strip_control(text), limit)


def first_sentence(text: str) -> str:
    """The first line of text, up to and including its first sentence end."""
    line = strip_control(text).strip().split("\n", 1)[0]
    match = re.search(r"[.!?](\s|$)", line)
    return line[: match.start() + 1] if match else line


def markdown_inline(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """Learner text made safe inside a Markdown paragraph or table cell: one line, HTML
    escaped, Markdown punctuation backslash-escaped, line breaks as <br>."""
    text = clean(text, limit).strip()
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return text.replace("\n", "<br>")


def markdown_block(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """Learner text as a fenced code block whose fence no line of the text can close."""
    text = clean(text, limit).rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"
