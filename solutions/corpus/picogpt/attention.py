"""Scaled dot-product attention after jaymody/picoGPT (gpt2.py, attention): softmax(q @ k.T /
sqrt(d_k) + mask) @ v, with picoGPT's additive mask (0 where a query may attend, -1e10 where it
may not, as its causal mask is built), made from the contract's boolean mask; no shape checks.
Returns the weights too (picoGPT returns the output only)."""

import numpy as np

from .softmax import softmax


def scaled_dot_product_attention(q, k, v, mask=None):
    additive = 0.0 if mask is None else (1 - np.asarray(mask, dtype=float)) * -1e10
    weights = softmax(q @ k.T / np.sqrt(q.shape[-1]) + additive)
    return weights @ v, weights
