"""Softmax after scipy (scipy/special/_logsumexp.py, softmax): the input made an array, its
maximum along the axis (np.amax, keepdims) subtracted, exp, then divided by the sum along the
same axis. scipy's default axis is None (the whole array); the contract's default -1 here. A
slice that is entirely -inf has -inf as its maximum, and -inf - -inf is NaN."""

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    x_max = np.amax(x, axis=axis, keepdims=True)
    exp_x_shifted = np.exp(x - x_max)
    return exp_x_shifted / np.sum(exp_x_shifted, axis=axis, keepdims=True)
