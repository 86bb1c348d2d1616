"""Multi-head attention after karpathy/ng-video-lecture (gpt.py, Head and MultiHeadAttention): a
list of independent heads, each projecting key, query and value with its own bias-free linear
map, q @ k^T * head_size ** -0.5, masked with -inf, softmax, dropout, @ v; the heads' outputs
concatenated, projected by proj (with a bias) and dropped out again. The contract's W_q, W_k and
W_v are single (d_model, d_model) maps, so head i uses output rows i*d_k:(i+1)*d_k of them (the
lecture's head i holds exactly that slice); they stay bias-free as the lecture's are, whatever
the contract's bias. proj is W_o.

The lecture's causal tril buffer is the caller's mask (a 4-D mask gives head i its slice);
forward takes query, key and value and also returns the heads' weights, stacked as (B, h, L, S)."""

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.num_heads = num_heads
        self.head_size = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(self.head_size * num_heads, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.dropout = nn.Dropout(dropout)

    def head(self, i, query, key, value, mask):
        rows = slice(i * self.head_size, (i + 1) * self.head_size)
        k = F.linear(key, self.W_k.weight[rows])  # (B,S,hs)
        q = F.linear(query, self.W_q.weight[rows])  # (B,L,hs)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (B, L, S)
        if mask is not None:
            m = mask[:, i] if mask.dim() == 4 else mask
            wei = wei.masked_fill(m == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.attn_dropout(wei)
        v = F.linear(value, self.W_v.weight[rows])  # (B,S,hs)
        return wei @ v, wei

    def forward(self, query, key, value, mask=None):
        heads = [self.head(i, query, key, value, mask) for i in range(self.num_heads)]
        out = torch.cat([o for o, _ in heads], dim=-1)
        out = self.dropout(self.W_o(out))
        return out, torch.stack([w for _, w in heads], dim=1)
