"""The learner's line: where in their code a mistake a failure names can be fixed.

While `locating(locate)` is active (a course's graders set it), each known mistake a failure
names (`[attention/no-scale] ...`) gets, after its explanation and before its "Read: course
notes" sentence, the sentence `locate(mistake_id, message)` gives ("Look at
assignments/t101/attention.py:49, the line that scales the scores."), or nothing when it gives
None. The framework knows no course: where a mistake sits in a learner's source is the course's.
feedback.GradingFailure applies `placed` to every message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from autograder.results.mistake_tags import MARKER

#: (mistake id, the whole message) -> the sentence giving its place in the learner's code.
Locator = Callable[[str, str], "str | None"]
_LOCATE: ContextVar[Locator | None] = ContextVar("autograder_locate_mistake", default=None)
_READ = " Read: course notes, "


@contextmanager
def locating(locate: Locator) -> Iterator[None]:
    """Give each known mistake a failure names its place in the learner's code (module
    docstring): `locate(mistake_id, message)` returns a sentence, or None."""
    token = _LOCATE.set(locate)
    try:
        yield
    finally:
        _LOCATE.reset(token)


def placed(message: str) -> str:
    """message with each named mistake's place (locating) before its "Read:" sentence."""
    locate = _LOCATE.get()
    if locate is None or "[" not in message:
        return message
    out, done = [], 0
    for match in MARKER.finditer(message):
        read = message.find(_READ, match.end())
        if read < done or read < 0:
            continue
        following = MARKER.search(message, match.end())
        if following is not None and following.start() < read:
            continue  # a marker with no "Read:" of its own
        try:
            place = locate(match.group(1), message)
        except Exception:  # a course's locator must never turn a failure into a grader error
            place = None
        if not place or message[match.end() : read].endswith(place.rstrip(".") + "."):
            continue
        out.append(message[done:read] + " " + place)
        done = read
    return "".join(out) + message[done:] if out else message
