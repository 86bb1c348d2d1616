"""A learner's normalize that calls the library norm the course forbids."""

import numpy as np


def normalize(v: np.ndarray) -> np.ndarray:
    length = np.linalg.norm(v)
    if length == 0:
        raise ValueError("zero vector")
    return v / length
