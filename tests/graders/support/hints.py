"""hint_on_error: a catalogued mistake's sentence added to a learner's exception, when the
exception's message shows that mistake (the graders' one way to name a mistake that raises)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from autograder.feedback import GradingFailure
from autograder.runtime.shared.errors import LearnerError


@contextmanager
def hint_on_error(
    hint: str, *, when: str | tuple[str, ...] | Callable[[str], bool] = ""
) -> Iterator[None]:
    """Add `hint` to the sentence of an exception the learner's code raises inside the block,
    only when its message contains `when` (each of a tuple of texts; or `when(message)` is
    true); any other LearnerError passes through unchanged. A hint that names a catalogued
    mistake is counted as that mistake (summary.md, the class report): its `when` must be
    specific to it."""
    texts = (when,) if isinstance(when, str) else when
    matches = when if callable(when) else lambda message: all(t in message for t in texts)
    try:
        yield
    except LearnerError as error:
        if error.kind != "exception" or not matches(error.message):
            raise
        hint = hint.strip()
        end = "" if hint.endswith((".", "!", "?")) else "."
        feedback = error.feedback.rstrip().rstrip(".").rstrip()  # an exception text may end in " "
        raise GradingFailure(f"{feedback}. Hint: {hint}{end}") from None
