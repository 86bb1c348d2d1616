import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide d_model={d_model} exactly.")
        self.n_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        # chop the projected features into h chunks of d_head and stack them as a head axis
        q = torch.stack(self.W_q(query).split(self.d_head, dim=-1), dim=1)  # (B, h, L, d_head)
        k = torch.stack(self.W_k(key).split(self.d_head, dim=-1), dim=1)    # (B, h, S, d_head)
        v = torch.stack(self.W_v(value).split(self.d_head, dim=-1), dim=1)  # (B, h, S, d_head)

        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            att = att.masked_fill(~mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        if mask is not None:
            att = att.masked_fill(~mask, 0.0)  # no nan for rows with nothing to look at
        att = self.dropout(att)

        out = att @ v                                   # (B, h, L, d_head)
        out = torch.cat(out.unbind(dim=1), dim=-1)      # (B, L, d_model)
        return self.W_o(out), att
