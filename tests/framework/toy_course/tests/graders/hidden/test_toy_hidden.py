"""Hidden graders of the toy course: their messages must never show values."""

import numpy as np
import pytest

from autograder.feedback import expect_close


@pytest.mark.scale
def test_scale_batch(learner, rng):
    """scale on a batch with a negative factor"""
    x = rng.normal(size=(4, 2, 3))
    got = learner.module("scale").scale(x, -1.5)
    expect_close(got, -1.5 * x, what="scale(x, factor) on a hidden batch", atol=1e-12)


@pytest.mark.normalize
@pytest.mark.weight(3)
def test_normalize_long_vector(learner, rng):
    """normalize on a long vector"""
    v = rng.normal(size=64)
    got = learner.module("normalize").normalize(v)
    expect_close(got, v / np.sqrt((v**2).sum()), what="normalize(v) on a hidden vector", atol=1e-12)
