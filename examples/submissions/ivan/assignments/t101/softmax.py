import numpy as np


def softmax(x, axis=-1):
    """
    Stable softmax.

    Parameters
    ----------
    x : np.ndarray, any shape
    axis : int, the axis to normalise over

    Returns
    -------
    np.ndarray, same shape, each slice along axis sums to 1 (or is all 0 if it was all -inf)
    """
    x = np.asarray(x)
    out_dtype = x.dtype if x.dtype.kind == "f" else np.float64
    x = x.astype(out_dtype, copy=True)
    mx = x.max(axis=axis, keepdims=True)
    mx = np.where(np.isinf(mx), 0.0, mx).astype(out_dtype)
    ex = np.exp(x - mx)
    s = ex.sum(axis=axis, keepdims=True)
    return np.divide(ex, s, out=np.zeros_like(ex), where=(s != 0))
