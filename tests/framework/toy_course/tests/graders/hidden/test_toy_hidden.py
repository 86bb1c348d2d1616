"""Hidden graders of the toy course: their messages must never show values."""

from pathlib import Path

import numpy as np
import pytest

from autograder.config import find_course_file, load_course
from autograder.feedback import expect_close
from autograder.mistakes import course_catalogue


def no_sqrt() -> str:
    """The catalogue's sentence for normalize/no-sqrt (`autograder check` looks for its id in
    every failing test of normalize)."""
    config = load_course(find_course_file(Path(__file__)))
    return course_catalogue(config).sentence("normalize/no-sqrt")


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
    expect_close(
        got,
        v / np.sqrt((v**2).sum()),
        what="normalize(v) on a hidden vector",
        atol=1e-12,
        mistakes={no_sqrt(): v / (v**2).sum()},
    )
