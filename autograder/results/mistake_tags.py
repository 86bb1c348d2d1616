"""Named mistakes in feedback text: `[<component>/<slug>] explanation Read: course notes, ...`.

The catalogue (mistakes/catalogue.py) writes a known mistake's sentence with SENTENCE; the
points rule, summary.md and the class report find it again in a failing test's message. A
failure that names several mistakes its inputs cannot tell apart names them one after another;
every report tells them together, as one problem, never the first alone (named_mistakes).
"""

from __future__ import annotations

import re

# Learner-facing: how a named mistake reads in feedback.
SENTENCE = "[{id}] {explanation} Read: course notes, {notes}."
#: A named mistake inside any feedback text: "[<component>/<slug>] " then its explanation.
MARKER = re.compile(r"\[([A-Za-z_][A-Za-z0-9_]*/[a-z0-9]+(?:-[a-z0-9]+)*)\] ")


#: Several named mistakes a failure could not tell apart, told as one problem (feedback's
#: KNOWN_MISTAKES names them one after another): never one of them alone.
TOLD_TOGETHER = "One of {count} known mistakes that give this same result: {sentences}"
_COUNTS = {2: "two", 3: "three", 4: "four"}


def named_mistake(text: str) -> str | None:
    """The first named mistake in a feedback text, from its `[id]` marker to the end of its
    first sentence ("[attention/no-scale] Your scores are not scaled: ... softmax."), or None.
    When the failure names it with others its inputs cannot tell apart (named_mistakes), each
    one's first sentence, told together (TOLD_TOGETHER)."""
    found = named_mistakes(text)
    if not found:
        return None
    firsts = [_first_sentence(sentence, mistake) for mistake, sentence in found]
    return told_together(firsts)


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


def named_mistakes(text: str) -> list[tuple[str, str]]:
    """The first named mistake in a feedback text and each one named right after it, as a
    failure names several that its inputs cannot tell apart: (id, its whole sentence, as
    named_mistake_in_full gives it), in the text's order; [] when it names none."""
    first = named_mistake_in_full(text)
    if first is None:
        return []
    found = [first]
    rest = text[text.find(first[1]) + len(first[1]) :]
    while rest.startswith(" [") and MARKER.match(rest, 1):
        following = named_mistake_in_full(rest[1:])
        if following is None:  # pragma: no cover  (MARKER matched, so there is one)
            break
        found.append(following)
        rest = rest[1 + len(following[1]) :]
    return found


def told_together(sentences: list[str]) -> str:
    """One named mistake's sentence as it is; several, framed as one problem (TOLD_TOGETHER)."""
    if len(sentences) == 1:
        return sentences[0]
    count = _COUNTS.get(len(sentences), str(len(sentences)))
    return TOLD_TOGETHER.format(count=count, sentences=" ".join(sentences))


def _first_sentence(sentence: str, mistake: str) -> str:
    """A named mistake's whole sentence cut after its explanation's first sentence."""
    marker = len(mistake) + 3  # "[" id "] "
    end = re.search(r"[.!?](\s|$)", sentence[marker:])
    return sentence if end is None else sentence[: marker + end.start() + 1]
