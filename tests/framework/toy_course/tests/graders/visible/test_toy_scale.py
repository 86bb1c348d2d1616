"""Visible graders of the toy component `scale`."""

import numpy as np
import pytest

from autograder.feedback import expect_close, expect_raises, expect_shape

ADDS_FACTOR = "It adds the factor instead of multiplying by it."


@pytest.mark.scale
def test_scale_values(learner, rng):
    """scale(x, 3.0) multiplies every entry by 3"""
    x = rng.normal(size=(2, 3))
    got = learner.module("scale").scale(x, 3.0)
    expect_shape(got, x.shape, what="scale(x, 3.0)")
    expect_close(got, 3.0 * x, what="scale(x, 3.0)", atol=1e-12, mistakes={ADDS_FACTOR: x + 3.0})


@pytest.mark.scale
@pytest.mark.weight(2)
def test_scale_rejects_nan(learner):
    """scale(x, nan) raises ValueError"""
    expect_raises(
        "ValueError", learner.module("scale").scale, np.ones(2), float("nan"), what="scale(x, nan)"
    )
