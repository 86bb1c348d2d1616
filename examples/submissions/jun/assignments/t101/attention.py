import math

import numpy as np
import torch
import torch.nn as nn

from .softmax import softmax


def scaled_dot_product_attention(Q, K, V, mask=None):
    # TODO maybe support lists? for now arrays only
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"d_k of Q and K differ: Q.shape={Q.shape}, K.shape={K.shape}.")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V have different lengths: K.shape={K.shape}, V.shape={V.shape}.")
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    attn = softmax(scores, axis=-1)
    return attn @ V, attn


def self_attention(X, W_q, W_k, W_v, mask=None):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask=mask)


def cosine_similarity(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"Shapes differ: {a.shape} vs {b.shape}; give two vectors of the same length.")
    if not np.any(a) or not np.any(b):
        raise ValueError("A zero vector has no direction, so its cosine similarity is undefined.")
    return float(np.clip(a.dot(b) / np.linalg.norm(a) / np.linalg.norm(b), -1, 1))


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        d_k = d_k or d_model
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v or d_model, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        att = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            att = att.masked_fill(~mask, float("-inf"))
        att = torch.softmax(att, dim=-1).nan_to_num(0.0)
        return att @ v, att
