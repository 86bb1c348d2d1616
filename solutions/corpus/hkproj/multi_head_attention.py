"""Multi-head attention after hkproj/pytorch-transformer (model.py, MultiHeadAttentionBlock):
an assert that d_model is divisible by h, bias-free w_q, w_k, w_v, w_o (the contract's W_q,
W_k, W_v, W_o: its bias argument is taken and not used), heads split with view and
transpose(1, 2), a static attention() that divides by math.sqrt(d_k), fills -1e9 where the mask
is 0 (the caller's mask as it is, as the repository's (B, 1, 1, S) and (B, 1, L, L) masks are
used), softmax, dropout, and returns the scores too; heads merged with transpose, contiguous and
view. forward also returns the attention scores it keeps."""

import math

from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        h = num_heads
        self.d_model = d_model
        self.h = h
        assert d_model % h == 0, "d_model is not divisible by h"
        self.d_k = d_model // h
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    @staticmethod
    def attention(query, key, value, mask, dropout: nn.Dropout):
        d_k = query.shape[-1]
        attention_scores = (query @ key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            attention_scores.masked_fill_(mask == 0, -1e9)
        attention_scores = attention_scores.softmax(dim=-1)
        if dropout is not None:
            attention_scores = dropout(attention_scores)
        return (attention_scores @ value), attention_scores

    def forward(self, query, key, value, mask=None):
        query = self.W_q(query)
        key = self.W_k(key)
        value = self.W_v(value)
        query = query.view(query.shape[0], query.shape[1], self.h, self.d_k).transpose(1, 2)
        key = key.view(key.shape[0], key.shape[1], self.h, self.d_k).transpose(1, 2)
        value = value.view(value.shape[0], value.shape[1], self.h, self.d_k).transpose(1, 2)
        x, self.attention_scores = MultiHeadAttention.attention(
            query, key, value, mask, self.dropout
        )
        x = x.transpose(1, 2).contiguous().view(x.shape[0], -1, self.h * self.d_k)
        return self.W_o(x), self.attention_scores
