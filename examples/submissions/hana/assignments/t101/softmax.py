import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.float64
    x = x.astype(dtype)  # astype copies, so the input stays untouched

    finite_max = np.max(np.where(np.isneginf(x), np.finfo(dtype).min, x), axis=axis, keepdims=True)
    exp_x = np.exp(x - finite_max)
    total = exp_x.sum(axis=axis, keepdims=True)
    result = np.zeros_like(exp_x)
    np.divide(exp_x, total, out=result, where=total > 0)
    return result
