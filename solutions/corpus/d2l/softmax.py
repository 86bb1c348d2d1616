"""Softmax after Dive into Deep Learning (d2l.ai, section 4.4, softmax regression from
scratch): exp, then divide by the sum over the axis, with no shift by the maximum (the book
notes the overflow risk and leaves it to the library's cross-entropy). The book sums over axis
1 of a matrix; the contract's `axis` takes its place."""

import numpy as np


def softmax(X, axis=-1):
    X_exp = np.exp(X)
    partition = X_exp.sum(axis, keepdims=True)
    return X_exp / partition
