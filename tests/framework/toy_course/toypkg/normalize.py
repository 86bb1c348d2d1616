"""Normalizing a vector to unit length."""

import numpy as np


def normalize(v: np.ndarray) -> np.ndarray:
    """Return v / ||v|| (Euclidean norm), shape (n,). Raise ValueError for a zero vector."""
    raise NotImplementedError("normalize: divide v by its Euclidean length.")
