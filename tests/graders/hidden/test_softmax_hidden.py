"""Hidden graders for t101/softmax.py: other shapes, axes, dtypes and extreme values, compared
with torch.softmax and the reference; a result that matches a known mistake
(mistakes/softmax.toml) is named, without values."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.feedback import expect, expect_close, expect_shape, expect_type
from tests.graders.support.inputs import array
from tests.graders.support.softmax_mistakes import (
    AxisHinted,
    integer_output_sentence,
    softmax_mistakes,
    softmax_over,
)

pytestmark = pytest.mark.softmax

STABILITY_HINT = "subtract the maximum of each slice along `axis` (keepdims) before np.exp"
BLANK_HINT = "a slice that is entirely -inf must give all zeros, not NaN"


@pytest.fixture
def softmax(learner):
    """The learner's softmax; an axis error of its own names the wrong-axis mistake."""
    return AxisHinted(learner.module("softmax").softmax)


@pytest.mark.weight(2)
@pytest.mark.parametrize("axis", [2, -3, 0], ids=["axis=2", "axis=-3", "axis=0"])
def test_four_dimensional_axes(softmax, reference, rng, axis):
    """matches the reference on a 4-D input along any axis"""
    x = array(rng, 3, 4, 5, 2, scale=4.0)
    what = f"softmax(x, axis={axis}) with x of shape (3, 4, 5, 2)"
    got = softmax(x, axis=axis)
    expect_shape(got, x.shape, what=what)
    expected = reference.module("softmax").softmax(x, axis=axis)
    expect_close(got, expected, what=what, atol=1e-10, mistakes=softmax_mistakes(x, axis, got))


@pytest.mark.weight(2)
@pytest.mark.parametrize(
    "offset", [1000.0, -1000.0, 1e5], ids=["near_1000", "near_-1000", "near_1e5"]
)
def test_extreme_logits(softmax, rng, offset):
    """stays finite and correct for very large and very negative logits"""
    x = offset + array(rng, 3, 7, scale=5.0)
    got = softmax(x)
    expect_close(
        got,
        softmax_over(x, -1),
        what="softmax(x) with extreme logits",
        atol=1e-10,
        hint=STABILITY_HINT,
        mistakes=softmax_mistakes(x, -1, got),
    )


@pytest.mark.weight(2)
def test_slices_far_apart_along_axis_zero(softmax, rng):
    """slices along axis 0 whose logits lie 800 apart are each normalised correctly"""
    x = array(rng, 4, 3, 5, scale=2.0) + np.array([800.0, 0.0, -800.0])[:, None]
    got = softmax(x, axis=0)
    expect_close(
        got,
        softmax_over(x, 0),
        what="softmax(x, axis=0) with x of shape (4, 3, 5) and slices far apart",
        atol=1e-10,
        hint="shift each slice by its own maximum along `axis` (keepdims=True)",
        mistakes=softmax_mistakes(x, 0, got),
    )


def test_float32_large_logits_stay_float32(softmax, rng):
    """float32 logits near 100 stay float32 and finite"""
    x = (100.0 + array(rng, 4, 6, scale=10.0)).astype(np.float32)
    got = softmax(x, axis=0)
    expect_type(got, np.ndarray, what="softmax(x, axis=0) with a float32 x")
    expect(
        got.dtype == np.float32,
        f"softmax(x, axis=0) with a float32 x returned dtype {got.dtype}; expected float32.",
    )
    expect_close(
        got,
        softmax_over(x, 0),
        what="softmax(x, axis=0) with float32 logits near 100",
        # float32 keeps 24 bits: an equivalent stable form (exp(x - logsumexp)) rounds its
        # exponent at |x| ~ 130, moving a weight by up to ~130 * 2**-24 = 8e-6 of itself.
        atol=2e-5,
        hint=STABILITY_HINT,
        mistakes=softmax_mistakes(x, 0, got),
    )


def test_integer_input_along_axis_zero(softmax, rng):
    """int32 input along axis 0 gives a floating result"""
    x = rng.integers(-5, 6, size=(4, 3)).astype(np.int32)
    got = softmax(x, axis=0)
    what = "softmax(x, axis=0) with an int32 x"
    expect_type(got, np.ndarray, what=what)
    expect(
        np.issubdtype(got.dtype, np.floating),
        f"{what} returned dtype {got.dtype}; expected a floating dtype."
        + integer_output_sentence(got, what),
    )
    expect_close(
        got,
        softmax_over(x, 0),
        what=what,
        atol=1e-6,
        mistakes=softmax_mistakes(x, 0, got),
    )


@pytest.mark.weight(2)
def test_minus_inf_patterns(softmax, reference, rng):
    """scattered -inf entries weigh 0 and all -inf slices give zeros, along axis 1"""
    x = array(rng, 2, 5, 3)
    x[rng.random(x.shape) < 0.3] = -np.inf
    x[0, :, 1] = -np.inf  # an entire slice along axis 1
    x[1, :, 2] = -np.inf
    what = "softmax(x, axis=1) with -inf entries and all -inf slices"
    expected = reference.module("softmax").softmax(x, axis=1)
    got = softmax(x, axis=1)
    expect_close(
        got,
        expected,
        what=what,
        atol=1e-10,
        hint=BLANK_HINT,
        mistakes=softmax_mistakes(x, 1, got),
    )


def test_size_one_axis_gives_ones(softmax, rng):
    """a slice of length 1 gets weight 1"""
    x = array(rng, 4, 1, scale=30.0)
    got = softmax(x, axis=1)
    expect_close(
        got,
        np.ones((4, 1)),
        what="softmax(x, axis=1) with x of shape (4, 1)",
        atol=1e-12,
        mistakes=softmax_mistakes(x, 1, got),
    )


def test_input_not_modified_along_axis_zero(softmax, rng):
    """does not modify a float32 input along axis 0"""
    x = array(rng, 5, 3).astype(np.float32)
    call = softmax.call(x.copy(), axis=0)
    expect_close(
        call.args[0],
        x,
        what="x after softmax(x, axis=0)",
        atol=0,
        hint="do not use in-place operations (-=, /=, out=x) on x",
    )
