"""Scaled dot-product attention after eliben/deep-learning-samples, tokens as columns.

The source (transformer-attention/selfattention.py, self_attention_cols, and softmax.py,
softmax_cols) scales the scores K^T Q by sqrt(k.shape[0]), the key width there, and takes a
max-shifted softmax over each column, the keys there.

Rewritten for the contract's rows as a literal translation does: Q @ swapaxes(K, -1, -2), with
the axes the scale and the softmax read kept as the first of the last two (K.shape[-2], axis
-2), which in rows are the key length S and the query axis; softmax_cols written inline. It
takes the contract's mask and leaves it unused, and checks no shapes, as the source does."""

import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    kq = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])
    ex = np.exp(kq - np.max(kq, axis=-2, keepdims=True))
    att = ex / np.sum(ex, axis=-2, keepdims=True)
    return att @ V, att
