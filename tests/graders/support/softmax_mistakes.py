"""Softmax: the expected values, from torch.softmax, and what each known mistake gives instead.

These ship with the visible graders, so they are built from torch built-ins and the mistakes'
own definitions (an unshifted exp, one global maximum, another axis), never from a reference
solution, and they run in the trusted harness only. A test hands them to
`expect_close(..., mistakes={sentence: array})`, which names the mistake (its catalogue
sentence, mistakes/softmax.toml) when the learner's result matches one of them.

`x` is any real array, `axis` any valid axis (negative allowed). A slice whose sum is 0 (all
-inf, or underflowed to 0 by a mistake) comes out of a mistake as zeros when the learner's code
guards its division and as NaN when it does not: pass the learner's result as `got` and, on
those slices only, the mistake arrays follow whichever it did, entry by entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

from autograder.feedback import KNOWN_MISTAKE, Lazy
from tests.graders.support.catalogue import mistake
from tests.graders.support.hints import hint_on_error

NO_MAX_SHIFT = mistake("softmax/no-max-shift")
GLOBAL_MAX = mistake("softmax/global-max")
WRONG_AXIS = mistake("softmax/wrong-axis")
INTEGER_OUTPUT = mistake("softmax/integer-output")
NAN_ALL_INF = mistake("softmax/nan-all-inf")


def softmax_over(x: np.ndarray, axis: int) -> np.ndarray:
    """torch.softmax of `x` along `axis`, in float64 (a slice that is all -inf gives zeros)."""
    t = torch.as_tensor(np.asarray(x, dtype=np.float64))
    out = torch.softmax(t, dim=axis)
    return torch.nan_to_num(out, nan=0.0).numpy()


def softmax_nan_on_blank(x: np.ndarray, axis: int) -> np.ndarray:
    """torch.softmax as it comes: NaN on every slice that is all -inf (the nan-all-inf mistake)."""
    return torch.softmax(torch.as_tensor(np.asarray(x, dtype=np.float64)), dim=axis).numpy()


def axis_mistakes(x: np.ndarray, axis: int) -> dict[str, np.ndarray]:
    """What softmax(x, axis) would give if it normalised over each other axis of x instead."""
    wanted = axis % x.ndim
    return {
        f"{WRONG_AXIS} Here it normalises over axis {other}; expected axis={axis}.": softmax_over(
            x, other
        )
        for other in range(x.ndim)
        if other != wanted
    }


def softmax_mistakes(x: np.ndarray, axis: int, got: object = None) -> Lazy:
    """{sentence: result} for every softmax mistake that can show on `x` along `axis`, as a
    feedback.Lazy: computed only when read (expect_close reads it only when the result is wrong).

    got: the learner's result, when there is one; where it is NaN, the mistakes' empty slices
    (sum 0) are NaN too, elsewhere 0. Computed in x's floating dtype (float32 overflows sooner).
    """
    return Lazy(lambda: _softmax_mistakes(x, axis, got))


def _softmax_mistakes(x: np.ndarray, axis: int, got: object) -> dict[str, np.ndarray]:
    empty = _nan_where_nan(got, np.shape(x))
    with np.errstate(over="ignore", invalid="ignore"):
        unshifted = np.exp(_floating(x))  # inf where it overflows
        globally_shifted = np.exp(_floating(x) - _global_max(x))
    found = {}
    if np.isneginf(np.asarray(x, dtype=np.float64)).all(axis=axis).any():
        found[NAN_ALL_INF] = softmax_nan_on_blank(x, axis)  # before NO_MAX_SHIFT: also NaN there
    found[NO_MAX_SHIFT] = _normalise(unshifted, axis, empty)
    found[GLOBAL_MAX] = _normalise(globally_shifted, axis, empty)
    found.update(axis_mistakes(np.asarray(x), axis))
    wanted = axis % np.ndim(x)
    for other in (a for a in range(np.ndim(x)) if a != wanted):  # two mistakes at once
        here = f"Here it normalises over axis {other}; expected axis={axis}."
        if np.isneginf(np.asarray(x, dtype=np.float64)).all(axis=other).any():  # as above
            found[f"{NAN_ALL_INF} {WRONG_AXIS} {here}"] = softmax_nan_on_blank(x, other)
        found[f"{NO_MAX_SHIFT} {WRONG_AXIS} {here}"] = _normalise(unshifted, other, empty)
    return found


@contextmanager
def fixed_axis_hint(axis: int) -> Iterator[None]:
    """Name the wrong axis when the learner's softmax, asked for `axis`, fails on an axis of its
    own: NumPy's "axis 1 is out of bounds for array of dimension 1"."""
    pattern = re.compile(r"axis (-?\d+) is out of bounds for array of dimension (\d+)")

    def when(message: str) -> bool:
        found = pattern.search(message)
        return found is not None and int(found.group(1)) != axis % max(int(found.group(2)), 1)

    with hint_on_error(WRONG_AXIS, when=when):
        yield


def integer_output_sentence(got: object, what: str) -> str:
    """ " Known mistake in ...: [softmax/integer-output] ..." when `got` has an integer or bool
    dtype (the output buffer took an integer input's dtype); "" otherwise."""
    kind = getattr(getattr(got, "dtype", None), "kind", "")
    return f" {KNOWN_MISTAKE.format(what=what, mistake=INTEGER_OUTPUT)}" if kind in "biu" else ""


def _floating(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float64)


def _nan_where_nan(got: object, shape: tuple[int, ...]) -> np.ndarray | float:
    """NaN where `got` (of x's shape) is NaN, else 0; just 0 when got is not such an array."""
    try:
        values = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return 0.0
    return np.where(np.isnan(values), np.nan, 0.0) if values.shape == shape else 0.0


def _global_max(x: np.ndarray) -> np.floating:
    """The maximum of the whole array; 0 when it is -inf (as a guarded shift would do)."""
    m = np.max(_floating(x))
    return m if m != -np.inf else m.dtype.type(0)


def _normalise(e: np.ndarray, axis: int, empty: np.ndarray | float) -> np.ndarray:
    """e / e.sum(axis) with `empty` on slices whose sum is 0; inf / inf stays NaN."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        total = np.sum(e, axis=axis, keepdims=True)
        out = e / np.where(total == 0, 1, total)
    return np.where(total == 0, empty, out)


class AxisHinted:
    """A learner's softmax (a RemoteCallable) whose axis errors name the wrong-axis mistake:
    called as it is, or with `.call` (which also gives the arguments after the call)."""

    def __init__(self, own) -> None:
        self.own = own

    def __call__(self, x, *args, **kwargs):
        with fixed_axis_hint(kwargs.get("axis", args[0] if args else -1)):
            return self.own(x, *args, **kwargs)

    def call(self, x, *args, **kwargs):
        with fixed_axis_hint(kwargs.get("axis", args[0] if args else -1)):
            return self.own.call(x, *args, **kwargs)
