"""Text a worker sent, quoted so that no report can read it as the harness's own markup.

Reports read two things from a failure's words, both the harness's to write: a named mistake's
``[component/slug] `` marker (results/mistake_tags.MARKER) and the words "is not implemented
yet" (the class report leaves a learner whose every test of a component says them out of that
component's pass rates).

Every string a worker sends is learner-made: an exception's message or class name, a type name,
a label. ``defused`` gives it with a no-break space (U+00A0) in place of the space after each
marker and of the one before "implemented": it reads the same, and neither pattern matches it.
The harness applies it where worker text enters a message (failures.from_worker,
part_labels.ProgressFrames, remote_refs.RemoteRefs.decode).
"""

from __future__ import annotations

from typing import Any

from autograder.results.mistake_tags import MARKER
from autograder.runtime.shared.messages import NOT_IMPLEMENTED_WORDS

NO_BREAK_SPACE = "\u00a0"
_WORDS_DEFUSED = NOT_IMPLEMENTED_WORDS.replace(" implemented", NO_BREAK_SPACE + "implemented")


def defused(text: str) -> str:
    """``text`` with no named-mistake marker and no "is not implemented yet" a report would
    read (module docstring); text holding neither is returned unchanged."""
    if "[" in text:
        text = MARKER.sub(lambda m: m.group(0)[:-1] + NO_BREAK_SPACE, text)
    return text.replace(NOT_IMPLEMENTED_WORDS, _WORDS_DEFUSED)


def defused_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A copy of a worker's error fields with each string (and each string of a list or tuple)
    defused; other values as they were."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if isinstance(value, str):
            value = defused(value)
        elif isinstance(value, (list, tuple)):
            value = [defused(v) if isinstance(v, str) else v for v in value]
        out[key] = value
    return out
