import numpy as np


def softmax(x, axis=-1):
    arr = np.asarray(x)
    if arr.dtype.kind not in "fc":
        arr = arr.astype(np.float64)
    # numerically stable: exp(x - max) / sum(exp(x - max))
    biggest = np.amax(arr, axis=axis, keepdims=True)
    biggest = np.where(np.isneginf(biggest), np.zeros_like(biggest), biggest)
    num = np.exp(arr - biggest)
    den = np.sum(num, axis=axis, keepdims=True)
    return np.where(den > 0, num / np.where(den > 0, den, 1), np.zeros_like(num))
