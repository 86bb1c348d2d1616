"""Named mistakes in feedback text: `[<component>/<slug>] explanation Read: course notes, ...`.

The catalogue (mistakes/catalogue.py) writes a known mistake's sentence with SENTENCE; the
points rule, summary.md and the class report find it again in a failing test's message.
"""

from __future__ import annotations

import re

# Learner-facing: how a named mistake reads in feedback.
SENTENCE = "[{id}] {explanation} Read: course notes, {notes}."
#: A named mistake inside any feedback text: "[<component>/<slug>] " then its explanation.
MARKER = re.compile(r"\[([A-Za-z_][A-Za-z0-9_]*/[a-z0-9]+(?:-[a-z0-9]+)*)\] ")


def named_mistake(text: str) -> str | None:
    """The first named mistake in a feedback text, from its `[id]` marker to the end of its
    first sentence ("[attention/no-scale] Your scores are not scaled: ... softmax."), or None."""
    match = MARKER.search(text)
    if match is None:
        return None
    rest = text[match.start() :].split("\n", 1)[0]
    end = re.search(r"[.!?](\s|$)", rest[match.end() - match.start() :])
    return rest if end is None else rest[: match.end() - match.start() + end.start() + 1]


def named_mistake_in_full(text: str) -> tuple[str, str] | None:
    """(id, its whole sentence up to and including "Read: course notes, ...") for the first
    named mistake in a feedback text, or None."""
    match = MARKER.search(text)
    if match is None:
        return None
    rest = text[match.start() :].split("\n", 1)[0]
    read = rest.find(" Read: course notes, ")
    start = read if read >= 0 else match.end() - match.start()
    end = re.search(r"[.!?](\s|$)", rest[start + 1 :] if read >= 0 else rest[start:])
    if end is None:
        return match.group(1), rest
    stop = (start + 1 if read >= 0 else start) + end.start() + 1
    return match.group(1), rest[:stop]
