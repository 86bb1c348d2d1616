"""Softmax after eliben/deep-learning-samples (transformer-attention/softmax.py, softmax_cols,
the softmax its column-convention attention uses): x minus its max over axis 0, exponentiated,
divided by its sum over axis 0. It takes the contract's axis argument and, as the source's
function has none, leaves it unused."""

import numpy as np


def softmax(x, axis=-1):
    ex = np.exp(x - np.max(x, axis=0, keepdims=True))
    return ex / np.sum(ex, axis=0, keepdims=True)
