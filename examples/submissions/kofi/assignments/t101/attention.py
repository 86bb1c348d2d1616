import math

import numpy as np
import torch
import torch.nn as nn

from .softmax import softmax


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    if K.shape[-1] != d_k:
        raise ValueError(f"Q is {Q.shape} and K is {K.shape}: their last dimension (d_k) must match.")
    if V.shape[-2] != K.shape[-2]:
        raise ValueError(f"K is {K.shape} and V is {V.shape}: they need the same number of keys.")
    # step 1: scores  step 2: scale  step 3: mask  step 4: softmax  step 5: weighted sum of V
    scores = np.matmul(Q, np.swapaxes(K, -2, -1))
    scores = scores / math.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    out = np.matmul(weights, V)
    return out, weights


def self_attention(X, W_q, W_k, W_v, mask=None):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask)


def cosine_similarity(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"cosine_similarity: a has shape {a.shape} and b has shape {b.shape}, need equal lengths.")
    n = np.linalg.norm(a) * np.linalg.norm(b)
    if n == 0:
        raise ValueError("cosine_similarity: one of the inputs is the zero vector.")
    return float(np.clip(a @ b / n, -1.0, 1.0))


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        if d_k is None:
            d_k = d_model
        if d_v is None:
            d_v = d_model
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)

    def forward(self, x, mask=None):
        Q = self.W_q(x)
        K = self.W_k(x)
        V = self.W_v(x)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(K.shape[-1])
        if mask is not None:
            ok_rows = mask.any(-1, keepdim=True)
            scores = scores.masked_fill(~mask, -1e9)
            weights = torch.softmax(scores, dim=-1) * mask * ok_rows
        else:
            weights = torch.softmax(scores, dim=-1)
        return weights @ V, weights
