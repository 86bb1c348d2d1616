"""Multi-head attention after Dive into Deep Learning (d2l.ai, section 11.5): transpose_qkv and
transpose_output fold the heads into the batch axis, a DotProductAttention keeps its softmax
weights in `attention_weights` (masked scores filled with -1e6, d2l's masked_softmax) and
multiplies the values by dropout(attention_weights). The book's valid_lens are a boolean mask
here (broadcast to every head), nn.LazyLinear is nn.Linear(d_model, d_model), and forward also
returns the weights it keeps, (B, h, L, S)."""

import math

import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e6)
        self.attention_weights = nn.functional.softmax(scores, dim=-1)
        return torch.bmm(self.dropout(self.attention_weights), values)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def transpose_qkv(self, X):
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
        X = X.permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)

    def forward(self, queries, keys, values, mask=None):
        B, L, S = queries.shape[0], queries.shape[1], keys.shape[1]
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if mask is not None:
            mask = torch.as_tensor(mask, dtype=torch.bool)
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            mask = mask.expand(B, self.num_heads, L, S).reshape(B * self.num_heads, L, S)
        output = self.attention(queries, keys, values, mask)
        output_concat = self.transpose_output(output)
        weights = self.attention.attention_weights.reshape(B, self.num_heads, L, S)
        return self.W_o(output_concat), weights
