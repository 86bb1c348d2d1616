import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model ({d_model}) % num_heads ({num_heads}) must be 0.")
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def split(self, x):
        B, n, _ = x.shape
        return x.view(B, self.h, n, self.d_k)  # (B, h, n, d_k)

    def forward(self, query, key, value, mask=None):
        B, L, d_model = query.shape
        Q = self.split(self.W_q(query))
        K = self.split(self.W_k(key))
        V = self.split(self.W_v(value))

        S = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)  # (B, h, L, S)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            S = S.masked_fill(~mask, torch.finfo(S.dtype).min)
        A = torch.softmax(S, dim=-1)
        if mask is not None:
            A = A * mask
        A = self.dropout(A)

        out = torch.matmul(A, V)                  # (B, h, L, d_k)
        out = out.transpose(1, 2).reshape(B, L, d_model)
        return self.W_o(out), A
