import numpy as np


def softmax(x, axis=-1):
    """Softmax of x along axis. Works for ints too (they become floats)."""
    x = np.asarray(x)
    x = x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float64)
    moved = np.moveaxis(x, axis, -1)  # easier for me to think about the last axis

    top = moved.max(axis=-1, keepdims=True)
    top[np.isneginf(top)] = 0.0
    e = np.exp(moved - top)
    z = e.sum(axis=-1, keepdims=True)
    z[z == 0] = 1.0  # everything was -inf -> e is all zeros anyway
    return np.moveaxis(e / z, -1, axis)
