"""Scaling an array by a number."""

import numpy as np


def scale(x: np.ndarray, factor: float) -> np.ndarray:
    """Return x * factor, same shape as x. Raise ValueError when factor is NaN or infinite."""
    raise NotImplementedError("scale: multiply every entry of x by factor.")
