"""Softmax after jaymody/picoGPT (gpt2.py): exp(x - max(x)) / sum, over the last axis there;
over the contract's `axis` here."""

import numpy as np


def softmax(x, axis=-1):
    exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)
