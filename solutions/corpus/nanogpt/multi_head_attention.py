"""Multi-head attention after nanoGPT (karpathy, model.py, CausalSelfAttention): heads split
with view(B, T, h, C // h).transpose(1, 2), scores scaled by 1/sqrt(k.size(-1)), masked
scores set to -inf, attn_dropout on the weights and resid_dropout on the projected output.
The packed c_attn is three projections W_q, W_k, W_v (the contract's), c_proj is W_o, and the
causal buffer is the mask the caller gives, used as it is (nanoGPT's is (1, 1, T, T))."""

import math

import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        assert d_model % num_heads == 0
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head = num_heads
        self.n_embd = d_model
        self.dropout = dropout

    def forward(self, query, key, value, mask=None):
        B, T, C = query.size()
        S = key.size(1)
        q = self.W_q(query).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = self.W_k(key).view(B, S, self.n_head, C // self.n_head).transpose(1, 2)
        v = self.W_v(value).view(B, S, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if mask is not None:
            att = att.masked_fill(mask == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.resid_dropout(self.W_o(y))
        return y, att
