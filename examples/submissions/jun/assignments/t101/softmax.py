import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(float)
    with np.errstate(invalid="ignore"):
        z = x - np.max(x, axis=axis, keepdims=True)
    z = np.where(np.isnan(z), -np.inf, z)  # -inf minus -inf
    num = np.exp(z)
    den = num.sum(axis=axis, keepdims=True)
    den = np.where(den == 0, 1, den)
    return (num / den).astype(x.dtype)
