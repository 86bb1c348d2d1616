"""
Multi-head attention. I fold the heads into the batch so I can use torch.bmm
(the way the PyTorch source does it).
"""
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"Expected d_model divisible by num_heads, got d_model={d_model}, num_heads={num_heads}."
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def _fold(self, t):
        # (B, n, d_model) -> (B, n, h, d_k) -> (B, h, n, d_k) -> (B*h, n, d_k)
        B, n, _ = t.shape
        return t.reshape(B, n, self.num_heads, self.d_k).transpose(1, 2).reshape(B * self.num_heads, n, self.d_k)

    def forward(self, query, key, value, mask=None):
        B, L, _ = query.shape
        S = key.shape[1]
        h = self.num_heads

        q = self._fold(self.W_q(query))   # (B*h, L, d_k)
        k = self._fold(self.W_k(key))     # (B*h, S, d_k)
        v = self._fold(self.W_v(value))   # (B*h, S, d_k)

        logits = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.d_k)   # (B*h, L, S)
        logits = logits.view(B, h, L, S)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            logits = logits.masked_fill(~mask, float("-inf"))
            dead = ~mask.any(dim=-1, keepdim=True)
            logits = logits.masked_fill(dead, 0.0)
        weights = torch.softmax(logits, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(dead, 0.0)
        weights = self.dropout(weights)

        out = torch.bmm(weights.reshape(B * h, L, S), v)       # (B*h, L, d_k)
        out = out.view(B, h, L, self.d_k).transpose(1, 2)      # (B, L, h, d_k)
        out = out.reshape(B, L, self.d_model)                  # concat heads
        return self.W_o(out), weights
