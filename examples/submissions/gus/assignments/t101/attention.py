import numpy as np
import torch
import torch.nn as nn

from .softmax import softmax

DEBUG = False


def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Shape mismatch: Q is {Q.shape} but K is {K.shape} (last dims must be equal).")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"Shape mismatch: K is {K.shape} but V is {V.shape} (need same seq length).")
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # (seq_len, seq_len) like in class
    if DEBUG:
        print("scores", scores.shape)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    attn_weights = softmax(scores, axis=-1)
    Y = attn_weights @ V
    return Y.astype(Q.dtype), attn_weights.astype(Q.dtype)


def self_attention(X, W_q, W_k, W_v, mask=None):
    Q = X @ W_q   # (seq_len, d_k)
    K = X @ W_k   # (seq_len, d_k)
    V = X @ W_v   # (seq_len, d_v)
    return scaled_dot_product_attention(Q, K, V, mask)


def cosine_similarity(a, b):
    if len(a) != len(b):
        raise ValueError(f"Can't compare a vector of length {len(a)} with one of length {len(b)}.")
    na = np.linalg.norm(a)
    nb = np.linalg.norm(b)
    if na == 0 or nb == 0:
        raise ValueError("Got a zero vector; cosine similarity needs two non-zero vectors.")
    return float(np.clip(np.dot(a, b) / (na * nb), -1, 1))


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        d_k = d_k if d_k else d_model
        d_v = d_v if d_v else d_model
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)

    def forward(self, x, mask=None):
        Q = self.W_q(x)
        K = self.W_k(x)
        V = self.W_v(x)
        d_k = Q.shape[-1]
        scores = Q @ K.mT / (d_k ** 0.5)   # .mT = transpose of the last two dims only
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            keep = mask.any(dim=-1, keepdim=True)
            scores = torch.where(keep, scores, torch.zeros_like(scores))
            attn = torch.softmax(scores, dim=-1) * keep
        else:
            attn = torch.softmax(scores, dim=-1)
        return attn @ V, attn
