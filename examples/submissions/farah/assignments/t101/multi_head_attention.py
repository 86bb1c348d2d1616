import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    """Multi-head attention, one head at a time (easier to follow than reshapes)."""

    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"Can't split d_model={d_model} into {num_heads} equal heads.")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        Q = self.W_q(query)  # (B, L, d_model)
        K = self.W_k(key)    # (B, S, d_model)
        V = self.W_v(value)  # (B, S, d_model)
        if mask is not None and mask.dim() == 4:
            mask = mask[:, 0] if mask.shape[1] == 1 else mask

        head_outputs, head_weights = [], []
        for i in range(self.num_heads):
            cols = slice(i * self.d_k, (i + 1) * self.d_k)
            q_i, k_i, v_i = Q[..., cols], K[..., cols], V[..., cols]

            scores = q_i @ k_i.transpose(-2, -1) / math.sqrt(self.d_model)
            m = mask[:, i] if (mask is not None and mask.dim() == 4) else mask
            if m is not None:
                scores = scores.masked_fill(~m, -math.inf)
            w = torch.softmax(scores, dim=-1)
            if m is not None:
                w = w.masked_fill(~m, 0.0)
            w = self.dropout(w)
            head_outputs.append(w @ v_i)
            head_weights.append(w)

        concat = torch.cat(head_outputs, dim=-1)      # (B, L, d_model)
        weights = torch.stack(head_weights, dim=1)    # (B, h, L, S)
        return self.W_o(concat), weights
