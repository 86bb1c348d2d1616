import numpy as np


def softmax(x, axis=-1):
    # same trick as the notebook: subtract the max first
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(float)
    m = np.max(x, axis=axis, keepdims=True)
    m[~np.isfinite(m)] = 0  # whole slice is -inf
    e = np.exp(x - m)
    s = np.sum(e, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = e / s
    out[np.isnan(out)] = 0  # 0/0 for the all -inf slices
    return out
