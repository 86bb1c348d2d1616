import math

import numpy as np
import torch
from torch import nn

from .softmax import softmax


def scaled_dot_product_attention(Q, K, V, mask=None):
    *_, L, d_k = Q.shape
    *_, S, d_k2 = K.shape
    S_v = V.shape[-2]
    if d_k != d_k2:
        raise ValueError(f"Q has width {d_k} (shape {Q.shape}) but K has width {d_k2} (shape {K.shape}).")
    if S != S_v:
        raise ValueError(f"K has {S} positions (shape {K.shape}) but V has {S_v} (shape {V.shape}).")

    KT = np.swapaxes(K, -1, -2)            # (..., d_k, S)
    scores = (Q @ KT) / math.sqrt(d_k)     # (..., L, S)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    A = softmax(scores)                    # default axis=-1 = keys
    return A @ V, A


def self_attention(X, W_q, W_k, W_v, mask=None):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask)


def cosine_similarity(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape:
        raise ValueError(f"cosine_similarity needs equal lengths, got {a.shape} and {b.shape}.")
    denom = math.sqrt(a @ a) * math.sqrt(b @ b)
    if denom == 0.0:
        raise ValueError("cosine_similarity got a zero vector, which has no direction.")
    return max(-1.0, min(1.0, float(a @ b) / denom))


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        self.d_k = d_model if d_k is None else d_k
        d_v = d_model if d_v is None else d_v
        self.W_q = nn.Linear(d_model, self.d_k, bias=False)
        self.W_k = nn.Linear(d_model, self.d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(~mask, -math.inf)
        a = torch.softmax(s, dim=-1)
        if mask is not None:
            a = a.masked_fill(~mask, 0.0)  # kills the nan of fully masked rows too
        return a @ v, a
