import numpy as np


def softmax(x, axis=-1):
    """numerically stable softmax"""
    x = np.array(x, copy=True)  # copy so I never change the caller's array
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)

    x_max = np.max(x, axis=axis, keepdims=True)
    x_max = np.nan_to_num(x_max, neginf=0.0)  # rows that are only -inf
    x -= x_max
    np.exp(x, out=x)
    denom = x.sum(axis=axis, keepdims=True)
    np.divide(x, denom, out=x, where=denom != 0)
    return x
