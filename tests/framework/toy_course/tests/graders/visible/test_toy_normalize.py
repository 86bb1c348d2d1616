"""Visible graders of the toy component `normalize`."""

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from autograder.config import find_course_file, load_course
from autograder.feedback import expect_close, expect_raises
from autograder.mistakes import course_catalogue


@cache
def mistake(mistake_id: str) -> str:
    """The catalogue's sentence naming a known mistake (`autograder check` looks for its id)."""
    return course_catalogue(load_course(find_course_file(Path(__file__)))).sentence(mistake_id)


@pytest.mark.normalize
def test_unit_length(learner, rng):
    """normalize(v) has length 1 and points along v"""
    v = rng.normal(size=5)
    got = learner.module("normalize").normalize(v)
    expect_close(
        got,
        v / np.sqrt((v**2).sum()),
        what="normalize(v)",
        atol=1e-12,
        mistakes={mistake("normalize/no-sqrt"): v / (v**2).sum()},
    )


@pytest.mark.normalize
def test_zero_vector_raises(learner):
    """normalize(zeros) raises ValueError"""
    expect_raises(
        "ValueError",
        learner.module("normalize").normalize,
        np.zeros(3),
        what="normalize(np.zeros(3))",
    )
