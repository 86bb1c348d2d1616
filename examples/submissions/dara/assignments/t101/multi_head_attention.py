import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(
                f"d_model must be divisible by num_heads, got d_model={d_model} "
                f"and num_heads={num_heads}."
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads

        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        B, L, _ = query.shape
        S = key.shape[1]

        # 1) project, then cut the last dim into heads: (B, L, d_model) -> (B, h, L, d_k)
        Q = self.W_q(query).view(B, L, self.num_heads, self.d_k).transpose(1, 2)
        K = self.W_k(key).view(B, S, self.num_heads, self.d_k).transpose(1, 2)
        V = self.W_v(value).view(B, S, self.num_heads, self.d_k).transpose(1, 2)

        # 2) attention in every head at once
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, h, L, S)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)  # same mask for all heads
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(mask == 0, 0.0)  # rows with no key at all were nan
        weights = self.dropout(weights)
        heads = weights @ V  # (B, h, L, d_k)

        # 3) concat the heads back and mix them with W_o
        concat = heads.transpose(1, 2).contiguous().view(B, L, self.d_model)
        return self.W_o(concat), weights
