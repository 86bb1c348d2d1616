"""Which known mistakes a wrong result matches: every one, not only the first listed.

Two mistakes can give the same result on a test's inputs; naming only the first would tell
some learners the wrong one, so `matching` returns each mistake whose prediction matches, in
the mapping's order. A later match whose catalogue ids (`[<component>/<slug>]`) are a subset
or a superset of an earlier match's is left out: a grader that lists a combined mistake before
its parts (or a part before the combinations that add nothing on these inputs) keeps that
choice. feedback.expect_close words the result (KNOWN_MISTAKE, KNOWN_MISTAKES).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from autograder.results.mistake_tags import MARKER


class AnyOf:
    """Several results one mistake can give (e.g. a ReLU moved after W_2, or added there too):
    `expect_close(..., mistakes={sentence: AnyOf(a, b)})` names the mistake if any matches."""

    def __init__(self, *arrays: object) -> None:
        self.arrays = arrays


class Satisfies:
    """A mistake told by a property of the result rather than by one array (a result normalised
    per token, say): `expect_close(..., mistakes={sentence: Satisfies(test)})` names it when
    `test(have)` is true, `have` being the learner's result as a float64 numpy array (any
    shape: the test checks it). A test that raises counts as false."""

    def __init__(self, test: Callable[[np.ndarray], bool]) -> None:
        self.test = test

    def holds(self, have: np.ndarray) -> bool:
        try:
            return bool(self.test(have))
        except Exception:  # noqa: BLE001  (a property that cannot be computed does not hold)
            return False


def matching(
    have: np.ndarray, mistakes: Mapping[str, object], atol: float, rtol: float
) -> list[str]:
    """The descriptions of every mistake whose prediction matches `have`, in mapping order,
    leaving out one whose ids nest with an earlier match's (see the module docstring)."""
    found: list[str] = []
    for description, produced in mistakes.items():
        if _matches(have, produced, atol, rtol) and not _nested(description, found):
            found.append(description)
    return found


def _matches(have: np.ndarray, produced: object, atol: float, rtol: float) -> bool:
    if isinstance(produced, Satisfies):
        return produced.holds(have)
    for candidate in produced.arrays if isinstance(produced, AnyOf) else (produced,):
        array = _numbers(candidate)
        if array is not None and array.shape == have.shape:
            if np.isclose(have, array, atol=atol, rtol=rtol, equal_nan=True).all():
                return True
    return False


def _nested(description: str, found: list[str]) -> bool:
    """True when description repeats an earlier match, or its ids nest with an earlier one's."""
    ids = set(MARKER.findall(description))
    for earlier in found:
        before = set(MARKER.findall(earlier))
        if description.strip() == earlier.strip() or (
            ids and before and (ids <= before or before <= ids)
        ):
            return True
    return False


def _numbers(value: object) -> np.ndarray | None:
    """value as a float64 array, or None when it is not numbers."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().double().numpy()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, RuntimeError):
        return None
    if array.dtype == object or array.dtype.kind not in "biuf":
        return None
    return array.astype(np.float64)
