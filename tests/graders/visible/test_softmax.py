"""Visible graders for t101/softmax.py: softmax(x, axis=-1).

Expected values come from invariants and torch.softmax (support.softmax_mistakes.softmax_over);
a result that matches a known mistake (mistakes/softmax.toml) is named in the feedback.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograder.feedback import expect, expect_close, expect_dtype, expect_shape, expect_type
from tests.graders.support.inputs import array
from tests.graders.support.softmax_mistakes import (
    AxisHinted,
    integer_output_sentence,
    softmax_mistakes,
    softmax_over,
)

pytestmark = pytest.mark.softmax

STABILITY_HINT = (
    "exp overflows for large logits: subtract the maximum of each slice along `axis` (keepdims) "
    "before np.exp; the result is unchanged"
)


@pytest.fixture
def softmax(learner):
    """The learner's softmax; an axis error of its own names the wrong-axis mistake."""
    return AxisHinted(learner.module("softmax").softmax)


def test_returns_array_of_same_shape(softmax, rng):
    """returns a float64 ndarray of the input's shape"""
    x = array(rng, 3, 5)
    got = softmax(x)
    expect_type(got, np.ndarray, what="softmax(x) with x of shape (3, 5)")
    expect_shape(got, (3, 5), what="softmax(x) with x of shape (3, 5)")
    expect_dtype(got, np.float64, what="softmax(x) with a float64 x")


@pytest.mark.weight(2)
@pytest.mark.parametrize("axis", [0, 1, -1], ids=["axis=0", "axis=1", "axis=-1"])
def test_slices_sum_to_one_along_axis(softmax, rng, axis):
    """every slice along `axis` sums to 1 (axis 0, 1 and -1)"""
    x = array(rng, 2, 3, 4)
    got = softmax(x, axis=axis)
    what = f"softmax(x, axis={axis}) with x of shape (2, 3, 4)"
    expect_shape(got, x.shape, what=what)
    expect_close(
        got,
        softmax_over(x, axis),
        what=what,
        atol=1e-10,
        hint=f"exponentiate, then divide by the sum over axis={axis} (keepdims=True)",
        mistakes=softmax_mistakes(x, axis, got),
    )


def test_default_axis_is_last(softmax, rng):
    """without `axis`, each row (the last axis) sums to 1"""
    x = array(rng, 4, 3)
    got = softmax(x)
    expect_close(
        got,
        softmax_over(x, -1),
        what="softmax(x) with x of shape (4, 3) and the default axis",
        atol=1e-10,
        hint="the default is axis=-1",
        mistakes=softmax_mistakes(x, -1, got),
    )


@pytest.mark.weight(2)
def test_equals_torch_softmax(softmax, rng):
    """equals torch.softmax on random logits"""
    x = array(rng, 5, 7, scale=3.0)
    got = softmax(x, axis=-1)
    expect_close(
        got,
        softmax_over(x, -1),
        what="softmax(x, axis=-1)",
        atol=1e-10,
        mistakes=softmax_mistakes(x, -1, got),
    )


def test_shift_invariant(softmax, rng):
    """adding 100 to every logit changes nothing"""
    x = array(rng, 3, 6)
    got = softmax(x + 100.0)
    expect_close(
        got,
        softmax_over(x, -1),
        what="softmax(x + 100)",
        atol=1e-10,
        hint="softmax(x + c) equals softmax(x) for any constant c",
        mistakes=softmax_mistakes(x + 100.0, -1, got),
    )


@pytest.mark.weight(2)
def test_stable_for_large_logits(softmax, rng):
    """stays finite and correct for logits near 1000"""
    e = np.e
    pair = np.array([1000.0, 1001.0])
    got = softmax(pair)
    expect_close(
        got,
        np.array([1 / (1 + e), e / (1 + e)]),
        what="softmax([1000., 1001.])",
        atol=1e-12,
        hint=STABILITY_HINT,
        mistakes=softmax_mistakes(pair, -1, got),
    )
    x = 1000.0 + array(rng, 4, 5)
    got = softmax(x)
    expect_close(
        got,
        softmax_over(x, -1),
        what="softmax(x) with logits near 1000",
        atol=1e-10,
        hint=STABILITY_HINT,
        mistakes=softmax_mistakes(x, -1, got),
    )


@pytest.mark.weight(2)
def test_each_slice_shifted_by_its_own_maximum(softmax, rng):
    """rows 1000 apart (near 1000, 0 and -1000) are each normalised correctly"""
    x = array(rng, 3, 5) + np.array([[1000.0], [0.0], [-1000.0]])
    got = softmax(x)
    expect_close(
        got,
        softmax_over(x, -1),
        what="softmax(x) with rows near 1000, 0 and -1000",
        atol=1e-10,
        hint="shift each slice by its own maximum, np.max(x, axis=axis, keepdims=True)",
        mistakes=softmax_mistakes(x, -1, got),
    )


def test_float32_stays_float32(softmax, rng):
    """float32 input gives a float32 result"""
    x = array(rng, 3, 4).astype(np.float32)
    got = softmax(x)
    expect_type(got, np.ndarray, what="softmax(x) with a float32 x")
    expect(
        got.dtype == np.float32,
        f"softmax(x) with a float32 x returned dtype {got.dtype}; "
        "expected float32. Hint: do not convert to float64; np.exp and division keep float32.",
    )
    what = "softmax(x) with a float32 x"
    mistakes = softmax_mistakes(x, -1, got)
    expect_close(got, softmax_over(x, -1), what=what, atol=1e-6, mistakes=mistakes)


def test_integers_give_floats(softmax):
    """integer logits give a floating result"""
    x = np.array([[1, 2, 3], [0, 0, 0]])
    got = softmax(x)
    what = "softmax(x) with an integer x"
    expect_type(got, np.ndarray, what=what)
    expect(
        np.issubdtype(got.dtype, np.floating),
        f"{what} returned dtype {got.dtype}; expected a floating dtype."
        + (integer_output_sentence(got, what) or " Hint: convert with x.astype(float) first."),
    )
    mistakes = softmax_mistakes(x, -1, got)
    expect_close(got, softmax_over(x, -1), what=what, atol=1e-7, mistakes=mistakes)


def test_minus_inf_gets_zero(softmax, rng):
    """a -inf logit gets weight 0"""
    x = array(rng, 2, 5)
    x[0, 1] = x[1, 4] = -np.inf
    got = softmax(x)
    expect_close(
        got,
        softmax_over(x, -1),
        what="softmax(x) with some -inf entries",
        atol=1e-10,
        hint="exp(-inf) is 0: a -inf logit must get weight 0",
        mistakes=softmax_mistakes(x, -1, got),
    )


def test_all_minus_inf_slice_gives_zeros(softmax, rng):
    """a slice that is entirely -inf gives zeros, not NaN"""
    x = array(rng, 3, 4)
    x[1] = -np.inf
    what = "softmax(x) where row 1 is entirely -inf"
    got = softmax(x)
    expect_close(
        got,
        softmax_over(x, -1),
        what=what,
        atol=1e-10,
        hint="the max of an all -inf row is -inf and -inf - (-inf) is NaN; give such a row all "
        "zeros (for example, replace a -inf maximum by 0 before subtracting it)",
        mistakes=softmax_mistakes(x, -1, got),
    )


def test_input_not_modified(softmax, rng):
    """does not modify its input"""
    x = array(rng, 3, 4)
    call = softmax.call(x.copy(), axis=-1)
    expect_close(
        call.args[0],
        x,
        what="x after softmax(x)",
        atol=0,
        hint="work on a new array (x - max creates one); do not use in-place operations on x",
    )
