import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        assert_msg = f"d_model={d_model} is not a multiple of num_heads={num_heads}."
        if d_model % num_heads != 0:
            raise ValueError(assert_msg)
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.drop = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        B, L, D = query.shape
        S = key.shape[1]
        h, hd = self.num_heads, self.head_dim

        q = self.W_q(query).reshape(B, L, h, hd).permute(0, 2, 1, 3)  # B h L hd
        k = self.W_k(key).reshape(B, S, h, hd).permute(0, 2, 1, 3)    # B h S hd
        v = self.W_v(value).reshape(B, S, h, hd).permute(0, 2, 1, 3)  # B h S hd

        att = (q @ k.mT) / math.sqrt(hd)  # B h L S
        if mask is not None:
            if mask.ndim == 3:
                mask = mask.unsqueeze(1)
            att = att.masked_fill(~mask, float("-inf"))
            keep = mask.any(dim=-1, keepdim=True)
            att = torch.where(keep, att, torch.zeros_like(att))
            att = torch.softmax(att, dim=-1) * keep
        else:
            att = torch.softmax(att, dim=-1)
        att = self.drop(att)

        y = att @ v                                   # B h L hd
        y = y.permute(0, 2, 1, 3).reshape(B, L, D)    # B L D
        return self.W_o(y), att
