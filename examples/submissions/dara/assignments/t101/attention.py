import numpy as np
import torch
from torch import nn

from .softmax import softmax


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q)
    K = np.asarray(K)
    V = np.asarray(V)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q {Q.shape} and K {K.shape} must have the same last dimension d_k.")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K {K.shape} and V {V.shape} must have the same number of positions.")

    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k).astype(Q.dtype)  # (..., L, S)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)

    # normalise the attention so each key's column adds up to 1
    weights = softmax(scores, axis=-2)
    output = np.matmul(weights, V)
    return output, weights


def self_attention(X, W_q, W_k, W_v, mask=None):
    Q = np.matmul(X, W_q)
    K = np.matmul(X, W_k)
    V = np.matmul(X, W_v)
    return scaled_dot_product_attention(Q, K, V, mask=mask)


def cosine_similarity(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if len(a) != len(b):
        raise ValueError(f"Vectors have different lengths: {len(a)} vs {len(b)}.")
    if not a.any() or not b.any():
        raise ValueError("Cannot take the cosine similarity of a zero vector.")
    return float(np.clip(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), -1.0, 1.0))


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        if d_k is None:
            d_k = d_model
        if d_v is None:
            d_v = d_model
        self.scale = d_k ** 0.5
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)

    def forward(self, x, mask=None):
        Q = self.W_q(x)
        K = self.W_k(x)
        V = self.W_v(x)
        scores = Q @ K.transpose(-2, -1) / self.scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        attn_weights = torch.softmax(scores, dim=-1)
        attn_weights = torch.nan_to_num(attn_weights, nan=0.0)  # fully masked rows
        return attn_weights @ V, attn_weights
