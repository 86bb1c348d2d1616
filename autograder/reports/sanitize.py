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


# --- GitHub Actions: logs, annotations, job summaries and pull-request comments ---------------

#: Characters of learner text shown in one annotation, one summary or one PR comment.
GITHUB_LIMIT = 1000
# A line the runner would read as a workflow command: `::name ...::`, or the older `##[name]`
# and `##vso[...]` forms, possibly after leading blanks.
_WORKFLOW_COMMAND = re.compile(r"^(\s*)(::|##\[|##vso\[)", re.MULTILINE | re.IGNORECASE)
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")


def neutralise_workflow_commands(text: str) -> str:
    """text whose lines cannot be read as GitHub workflow commands: a line starting with `::`
    or `##[` gets a visible `> ` in front, so it shows as written but does nothing. Escape
    sequences and control characters go first, so a carriage return cannot start a new line
    in the runner's eyes after this check."""
    return _WORKFLOW_COMMAND.sub(r"\1> \2", strip_control(text))


def for_log(text: str, limit: int = GITHUB_LIMIT) -> str:
    """Learner text as printed to a CI log: cleaned, capped, no workflow commands."""
    return neutralise_workflow_commands(cap(strip_control(text), limit))


def markdown_github(text: str, limit: int = GITHUB_LIMIT) -> str:
    """markdown_inline for GitHub: also no @mentions (they would notify people) and no
    workflow commands; `%0A`-style escapes stay literal because `%` is not special here."""
    text = markdown_inline(neutralise_workflow_commands(text), limit)
    return _MENTION.sub("&#64;", text)
