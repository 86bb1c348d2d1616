import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .softmax import softmax


def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K widths differ: Q has shape {Q.shape}, K has shape {K.shape}.")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V lengths differ: K has shape {K.shape}, V has shape {V.shape}.")
    KT = np.swapaxes(K, -1, -2)
    scores = Q @ KT * (1.0 / math.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, float("-inf"))
    A = softmax(scores, axis=-1)
    return A @ V, A


def self_attention(X, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return scaled_dot_product_attention(Q, K, V, mask)


def cosine_similarity(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or a.size != b.size:
        raise ValueError(f"cosine_similarity wants two 1-D vectors of equal length, got {a.shape} and {b.shape}.")
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        raise ValueError("cosine_similarity is not defined when a vector is all zeros.")
    return float(np.clip(np.dot(a, b) / (na * nb), -1.0, 1.0))


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        d_k = d_model if d_k is None else d_k
        d_v = d_model if d_v is None else d_v
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)

    def forward(self, x, mask=None):
        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            all_masked = ~mask.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(all_masked, 0.0)
        A = F.softmax(scores, dim=-1)
        if mask is not None:
            A = A.masked_fill(all_masked, 0.0)
        return A @ V, A
