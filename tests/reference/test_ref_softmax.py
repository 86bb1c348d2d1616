"""The reference softmax equals torch.softmax and scipy.special.softmax, and keeps its promises."""

import warnings

import numpy as np
import pytest
import scipy.special
import torch
from t101.softmax import softmax


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_softmax_equals_torch_and_scipy(rng, dtype, axis):
    x = (rng.normal(size=(3, 4, 5)) * 4).astype(dtype)
    got = softmax(x, axis=axis)
    assert got.dtype == dtype
    assert got.shape == x.shape
    atol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, scipy.special.softmax(x, axis=axis), rtol=0, atol=atol)
    expected = torch.softmax(torch.from_numpy(x), dim=axis).numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=atol)


def test_default_axis_is_the_last(rng):
    x = rng.normal(size=(2, 6))
    np.testing.assert_array_equal(softmax(x), softmax(x, axis=-1))
    np.testing.assert_allclose(softmax(x).sum(axis=-1), np.ones(2), atol=1e-12)


def test_integers_give_float64():
    got = softmax(np.array([[1, 2, 3], [0, 0, 0]]))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got[1], np.full(3, 1 / 3), atol=1e-15)
    np.testing.assert_allclose(got[0], scipy.special.softmax([1.0, 2.0, 3.0]), atol=1e-15)


def test_large_inputs_are_stable():
    got = softmax(np.array([1000.0, 1001.0], dtype=np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [0.26894142, 0.73105858], atol=1e-7)


def test_shift_invariance(rng):
    x = rng.normal(size=(4, 7))
    np.testing.assert_allclose(softmax(x + 100.0), softmax(x), atol=1e-12)


def test_minus_inf_gets_zero_weight_and_all_minus_inf_gives_zeros():
    x = np.array([[0.0, -np.inf, 0.0], [-np.inf, -np.inf, -np.inf]], dtype=np.float32)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        got = softmax(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]])


def test_input_is_not_modified(rng):
    x = rng.normal(size=(3, 5))
    x[0, 0] = -np.inf
    before = x.copy()
    softmax(x, axis=0)
    np.testing.assert_array_equal(x, before)
