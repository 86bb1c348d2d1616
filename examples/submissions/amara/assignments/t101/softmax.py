import numpy as np


def softmax(x, axis=-1):
    """Softmax along `axis`, done the "log-sum-exp" way so big numbers don't overflow.

    x: any shape. returns: same shape, floats.
    """
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)  # ints -> floats, otherwise exp() gives weird results

    # shift by the max of each slice (this is what makes [1000, 1001] work)
    # a slice that is all -inf has max -inf, so shift by 0 there instead of getting nan
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0).astype(x.dtype)

    e = np.exp(x - peak)  # new array, x itself is never touched
    total = np.sum(e, axis=axis, keepdims=True)

    # all -inf slice => total == 0 => I want zeros, not 0/0
    safe_total = np.where(total > 0, total, 1).astype(x.dtype)
    return np.where(total > 0, e / safe_total, 0).astype(x.dtype)
