import math

import numpy as np
import torch
import torch.nn as nn

from .softmax import softmax


def _last_two_swapped(a):
    axes = list(range(a.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return np.transpose(a, axes)


def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"Incompatible shapes: Q {Q.shape}, K {K.shape}, V {V.shape}. Q and K need the same "
            "last dimension and K and V the same number of rows."
        )
    d_k = K.shape[-1]
    S = np.matmul(Q, _last_two_swapped(K)) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    A = softmax(S, axis=-1)
    return np.matmul(A, V), A


def self_attention(X, W_q, W_k, W_v, mask=None):
    Q = np.matmul(X, W_q)
    K = np.matmul(X, W_k)
    V = np.matmul(X, W_v)
    return scaled_dot_product_attention(Q, K, V, mask)


def cosine_similarity(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"Lengths differ: a has shape {a.shape}, b has shape {b.shape}.")
    if np.linalg.norm(a) == 0 or np.linalg.norm(b) == 0:
        raise ValueError("Zero vector given to cosine_similarity; it has no direction to compare.")
    c = np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.clip(c, -1.0, 1.0))


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        d_k = d_k or d_model
        d_v = d_v or d_model
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)
        self.d_k = d_k

    def forward(self, x, mask=None):
        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)
        S = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            S = S.masked_fill(~mask, torch.finfo(S.dtype).min)
        A = torch.softmax(S, dim=-1)
        if mask is not None:
            A = A * mask  # masked keys exactly 0 (and rows with nothing allowed become 0)
        return torch.matmul(A, V), A
