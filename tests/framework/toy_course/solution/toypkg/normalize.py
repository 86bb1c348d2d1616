"""Normalizing a vector to unit length (reference)."""

import numpy as np


def normalize(v: np.ndarray) -> np.ndarray:
    """Return v / ||v|| (Euclidean norm), shape (n,). Raise ValueError for a zero vector."""
    length = float(np.sqrt(np.sum(np.square(v))))
    if length == 0.0:
        raise ValueError("normalize needs a non-zero vector; got one of length 0.")
    return v / length
