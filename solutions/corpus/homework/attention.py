"""Scaled dot-product attention from a course homework in a public repository
(uxk44190/Assignment-5, "Dot Product.ipynb"): np.matmul(Q, K.transpose(0, 2, 1)) / sqrt(d_k),
a max-shifted softmax over the last axis, np.matmul(weights, V). The homework's function takes
no mask and checks no shapes; it takes the contract's mask argument and leaves it unused, and
returns (context, weights) in the contract's order (the homework returns weights first)."""

import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.matmul(Q, K.transpose(0, 2, 1)) / np.sqrt(d_k)
    exp_scores = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    attention_weights = exp_scores / np.sum(exp_scores, axis=-1, keepdims=True)
    context = np.matmul(attention_weights, V)
    return context, attention_weights
