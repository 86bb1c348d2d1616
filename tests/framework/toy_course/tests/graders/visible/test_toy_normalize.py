"""Visible graders of the toy component `normalize`."""

import numpy as np
import pytest

from autograder.feedback import expect_close, expect_raises


@pytest.mark.normalize
def test_unit_length(learner, rng):
    """normalize(v) has length 1 and points along v"""
    v = rng.normal(size=5)
    got = learner.module("normalize").normalize(v)
    expect_close(got, v / np.sqrt((v**2).sum()), what="normalize(v)", atol=1e-12)


@pytest.mark.normalize
def test_zero_vector_raises(learner):
    """normalize(zeros) raises ValueError"""
    expect_raises(
        "ValueError",
        learner.module("normalize").normalize,
        np.zeros(3),
        what="normalize(np.zeros(3))",
    )
