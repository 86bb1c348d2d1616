import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"MultiHeadAttention: d_model={d_model} cannot be split into num_heads={num_heads} equal parts."
            )
        self.d_model, self.h = d_model, num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        B = query.size(0)
        # project, then (B, n, d_model) -> (B, n, h, d_k) -> (B, h, n, d_k)
        Q = self.W_q(query).view(B, -1, self.h, self.d_k).transpose(1, 2)
        K = self.W_k(key).view(B, -1, self.h, self.d_k).transpose(1, 2)
        V = self.W_v(value).view(B, -1, self.h, self.d_k).transpose(1, 2)

        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            ok_rows = mask.any(-1, keepdim=True)
            scores = scores.masked_fill(~mask, -1e9)
            weights = torch.softmax(scores, dim=-1) * mask * ok_rows
        else:
            weights = torch.softmax(scores, dim=-1)
        weights = self.dropout(weights)

        x = (weights @ V).transpose(1, 2).contiguous().view(B, -1, self.d_model)
        return self.W_o(x), weights
