"""
Scaled dot-product attention (NumPy) and a single-head SelfAttention module (PyTorch).
"""
import numpy as np
import torch
import torch.nn as nn

from .softmax import softmax


def scaled_dot_product_attention(Q, K, V, mask=None):
    """
    Q: (..., L, d_k), K: (..., S, d_k), V: (..., S, d_v)
    returns output (..., L, d_v), weights (..., L, S)
    """
    Q = np.asarray(Q)
    K = np.asarray(K)
    V = np.asarray(V)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Expected Q and K with equal d_k, got Q {Q.shape} and K {K.shape}.")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"Expected K and V with equal length S, got K {K.shape} and V {V.shape}.")

    scale = 1.0 / np.sqrt(float(Q.shape[-1]))
    logits = np.matmul(Q, np.swapaxes(K, -1, -2)) * scale
    if mask is not None:
        logits = np.where(np.asarray(mask, dtype=bool), logits, -np.inf)
    weights = softmax(logits, axis=-1)
    output = np.matmul(weights, V)
    return output, weights


def self_attention(X, W_q, W_k, W_v, mask=None):
    """X: (..., L, d_model) -> project with the three matrices -> attention."""
    X = np.asarray(X)
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask=mask)


def cosine_similarity(a, b):
    """cos of the angle between two 1-D vectors."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"Expected vectors of equal length, got {a.shape[0]} and {b.shape[0]}.")
    na = np.sqrt(np.sum(a * a))
    nb = np.sqrt(np.sum(b * b))
    if na == 0.0 or nb == 0.0:
        raise ValueError("Expected non-zero vectors, got a vector of all zeros.")
    return float(np.clip(np.sum(a * b) / (na * nb), -1.0, 1.0))


class SelfAttention(nn.Module):
    """Single head, no bias, W_q/W_k/W_v created in this order (as in the notebook)."""

    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        self.d_k = d_model if d_k is None else d_k
        self.d_v = d_model if d_v is None else d_v
        self.W_q = nn.Linear(d_model, self.d_k, bias=False)
        self.W_k = nn.Linear(d_model, self.d_k, bias=False)
        self.W_v = nn.Linear(d_model, self.d_v, bias=False)

    def forward(self, x, mask=None):
        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)
        logits = Q @ K.transpose(-1, -2) / self.d_k ** 0.5
        if mask is not None:
            logits = logits.masked_fill(~mask, float("-inf"))
            dead = ~mask.any(dim=-1, keepdim=True)
            logits = logits.masked_fill(dead, 0.0)
        weights = torch.softmax(logits, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(dead, 0.0)
        return weights @ V, weights
