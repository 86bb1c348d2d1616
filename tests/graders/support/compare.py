"""Comparing an attention call's (output, weights) pair, and naming the call in messages."""

from __future__ import annotations

from collections.abc import Mapping

from autograder.feedback import expect, expect_close, expect_shape, expect_type, shown_what


def describe_call(name: str, *shown: tuple[str, object], note: str = "") -> str:
    """ "f(Q (3, 4), K (5, 4), mask (3, 5))": the call with each argument's name and shape
    (None arguments are left out), for messages. Shapes only: safe in hidden tests."""
    parts = [f"{label} {tuple(value.shape)}" for label, value in shown if value is not None]
    return f"{name}({', '.join(parts)}){note}"


def pair_of(got: object, *, what: str, array_type: type) -> tuple:
    """`got` as an (output, weights) pair of `array_type`, failing with a sentence when the call
    returned something else (one array, None, a string), before a grader indexes it."""
    expect_type(got, tuple, what=what)
    shown = shown_what(what)  # a hidden test shows no inputs
    expect(len(got) == 2, f"{shown} returned {len(got)} values; expected 2: (output, weights).")
    for index, name in ((0, "output"), (1, "weights")):
        expect_type(got[index], array_type, what=f"the {name} of {what}")
    return got


def expect_pair(
    got: object,
    expected: tuple,
    *,
    what: str,
    atol: float,
    array_type: type,
    hints: tuple[str | None, str | None] = (None, None),
    mistakes: tuple[Mapping | None, Mapping | None] = (None, None),
) -> None:
    """Check that `got` is an (output, weights) pair equal to `expected`: type, shape and value
    of the weights first (the usual place of a mistake), then of the output.

    hints: (hint for the output, hint for the weights).
    mistakes: ({sentence: output a mistake gives}, {sentence: weights a mistake gives}).
    """
    expect_type(got, tuple, what=what)
    shown = shown_what(what)  # a hidden test shows no inputs
    expect(len(got) == 2, f"{shown} returned {len(got)} values; expected 2: (output, weights).")
    for index, name in ((1, "weights"), (0, "output")):
        label = f"the {name} of {what}"
        expect_type(got[index], array_type, what=label)
        expect_shape(got[index], tuple(expected[index].shape), what=label, hint=hints[index])
        expect_close(
            got[index],
            expected[index],
            what=label,
            atol=atol,
            hint=hints[index],
            mistakes=mistakes[index],
        )
