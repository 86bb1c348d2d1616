"""Scaling an array by a number (reference)."""

import math

import numpy as np


def scale(x: np.ndarray, factor: float) -> np.ndarray:
    """Return x * factor, same shape as x. Raise ValueError when factor is NaN or infinite."""
    if not math.isfinite(factor):
        raise ValueError(f"factor must be a finite number, got {factor}.")
    return np.asarray(x) * factor
