"""support.softmax_mistakes names a softmax over another axis that leaves its all -inf slices
NaN as that and the NaN (nan-all-inf), not as a missing max shift, which it does not show."""

from __future__ import annotations

import numpy as np

from tests.graders.support.softmax_mistakes import softmax_mistakes


def column_softmax(x):
    """A max-shifted softmax over axis 0 whatever the axis asked (NaN on all -inf columns)."""
    with np.errstate(invalid="ignore"):
        ex = np.exp(x - np.max(x, axis=0, keepdims=True))
        return ex / np.sum(ex, axis=0, keepdims=True)


def _named(x, axis, got) -> list[str]:
    found = softmax_mistakes(x, axis, got)
    return [s for s, want in found.items() if np.allclose(got, want, equal_nan=True)]


def test_nan_columns_are_named_with_the_axis():
    x = np.array([[0.5, -np.inf, 1.0], [2.0, -np.inf, -np.inf], [1.0, -np.inf, 0.0]])
    named = _named(x, 1, column_softmax(x))
    assert named, named
    first = named[0]
    assert "[softmax/nan-all-inf]" in first and "[softmax/wrong-axis]" in first, first
    assert "[softmax/no-max-shift]" not in first


def test_a_plain_wrong_axis_is_named_alone():
    x = np.array([[0.5, 3.0, 1.0], [2.0, -1.0, 0.25]])
    first = _named(x, -1, column_softmax(x))[0]
    assert first.startswith("[softmax/wrong-axis]") and "nan-all-inf" not in first, first
