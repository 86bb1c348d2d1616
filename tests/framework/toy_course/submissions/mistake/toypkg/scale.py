"""A learner's scale with a classic slip: it adds the factor."""

import math

import numpy as np


def scale(x: np.ndarray, factor: float) -> np.ndarray:
    if not math.isfinite(factor):
        raise ValueError("factor must be finite.")
    print("\x1b[31mdebug\x1b[0m | <b>scaling</b> `x`")
    return np.asarray(x) + factor
