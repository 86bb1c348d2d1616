import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .softmax import softmax

# ---------------------------------------------------------------- numpy part


def scaled_dot_product_attention(Q, K, V, mask=None):
    """Q: (..., L, d_k)  K: (..., S, d_k)  V: (..., S, d_v)"""
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            "Q and K must have the same d_k, but got Q.shape=%s and K.shape=%s." % (Q.shape, K.shape)
        )
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            "K and V must have the same length S, but got K.shape=%s and V.shape=%s."
            % (K.shape, V.shape)
        )

    # similarity of each query with each key
    scores = Q @ np.swapaxes(K, -2, -1)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)  # not allowed -> weight 0 after softmax
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def self_attention(X, W_q, W_k, W_v, mask=None):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask)


def cosine_similarity(a, b):
    a, b = np.ravel(a).astype(float), np.ravel(b).astype(float)
    if a.size != b.size:
        raise ValueError("a has %d entries but b has %d, they need to match." % (a.size, b.size))
    norms = np.linalg.norm(a) * np.linalg.norm(b)
    if norms == 0:
        raise ValueError("One of the vectors is all zeros, so the angle is not defined.")
    return float(min(1.0, max(-1.0, np.dot(a, b) / norms)))


# ---------------------------------------------------------------- torch part


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        self.d_k = d_k or d_model
        self.d_v = d_v or d_model
        self.W_q = nn.Linear(d_model, self.d_k, bias=False)
        self.W_k = nn.Linear(d_model, self.d_k, bias=False)
        self.W_v = nn.Linear(d_model, self.d_v, bias=False)

    def forward(self, x, mask=None):
        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.matmul(Q, K.transpose(-1, -2)) * self.d_k ** -0.5
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        w = F.softmax(scores, dim=-1)
        if mask is not None:
            w = torch.where(mask.any(-1, keepdim=True), w, torch.zeros_like(w))
        return torch.matmul(w, V), w
