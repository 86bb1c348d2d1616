import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    out = np.zeros_like(x)
    # only work on slices that have at least one finite entry
    has_value = np.any(x > -np.inf, axis=axis, keepdims=True)
    shifted = x - np.max(np.where(has_value, x, 0), axis=axis, keepdims=True)
    ex = np.exp(shifted)
    denom = np.sum(ex, axis=axis, keepdims=True)
    np.divide(ex, denom, out=out, where=has_value)
    return out
