"""Week 5: attention in numpy first, then the torch SelfAttention from the notebook.

I wrote everything with einsum because I kept losing track of which axis gets transposed.
Letters: b = any batch axes, q = query position, k = key position, d = feature.
"""
import math

import numpy as np
import torch
import torch.nn as nn

from .softmax import softmax


def _check_shapes(Q, K, V):
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q and K need the same feature width, but Q has shape {Q.shape} "
            f"and K has shape {K.shape}."
        )
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K and V need the same number of positions, but K has shape {K.shape} "
            f"and V has shape {V.shape}."
        )


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    _check_shapes(Q, K, V)
    d_k = Q.shape[-1]

    # every query against every key -> (..., L, S)
    scores = np.einsum("...qd,...kd->...qk", Q, K) / math.sqrt(d_k)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)

    weights = softmax(scores, axis=-1)  # over the keys! (rows sum to one)
    output = np.einsum("...qk,...kd->...qd", weights, V)
    return output, weights


def self_attention(X, W_q, W_k, W_v, mask=None):
    X = np.asarray(X)
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return scaled_dot_product_attention(Q, K, V, mask)


def cosine_similarity(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same length, got {a.shape} and {b.shape}.")
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        raise ValueError("cosine similarity is undefined for a zero vector.")
    cos = float(np.dot(a, b) / (na * nb))
    return max(-1.0, min(1.0, cos))  # rounding can give 1.0000000002


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        d_k = d_model if d_k is None else d_k
        d_v = d_model if d_v is None else d_v
        self.d_k = d_k
        # same order as the notebook so the seed gives the same numbers
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(self.d_k)
        if mask is not None:
            mask = torch.as_tensor(mask, dtype=torch.bool, device=scores.device)
            anything = mask.any(dim=-1, keepdim=True)  # rows with at least one key allowed
            scores = scores.masked_fill(~mask, float("-inf"))
            scores = scores.masked_fill(~anything, 0.0)  # avoid softmax of all -inf = nan
            weights = torch.softmax(scores, dim=-1).masked_fill(~anything, 0.0)
        else:
            weights = torch.softmax(scores, dim=-1)
        out = torch.einsum("...qk,...kd->...qd", weights, v)
        return out, weights
