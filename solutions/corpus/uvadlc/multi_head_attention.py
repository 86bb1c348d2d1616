"""Multi-head attention after phlippe/uvadlc_notebooks (tutorial 6, MultiheadAttention and
scaled_dot_product): one packed projection of width 3 * d_model, reshaped to (B, T, h, 3 * d_k)
and chunked into q, k, v, so that each head takes its query, key and value from one run of
3 * d_k packed features; masked scores filled with -9e15; the mask given a head axis when 3-D
and batch and head axes when 2-D (expand_mask). The packed qkv_proj is the concatenation of the
contract's W_q(query), W_k(key) and W_v(value); o_proj is W_o."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.size()[-1]
    attn_logits = torch.matmul(q, k.transpose(-2, -1))
    attn_logits = attn_logits / math.sqrt(d_k)
    if mask is not None:
        attn_logits = attn_logits.masked_fill(mask == 0, -9e15)
    attention = F.softmax(attn_logits, dim=-1)
    values = torch.matmul(attention, v)
    return values, attention


def expand_mask(mask):
    assert mask.ndim >= 2, "Mask must be at least 2-dimensional with seq_length x seq_length"
    if mask.ndim == 3:
        mask = mask.unsqueeze(1)
    while mask.ndim < 4:
        mask = mask.unsqueeze(0)
    return mask


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        assert d_model % num_heads == 0, "Embedding dimension must be 0 modulo number of heads."
        self.embed_dim = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        batch_size, seq_length, _ = query.size()
        if mask is not None:
            mask = expand_mask(mask)
        qkv = torch.cat([self.W_q(query), self.W_k(key), self.W_v(value)], dim=-1)
        qkv = qkv.reshape(batch_size, seq_length, self.num_heads, 3 * self.head_dim)
        qkv = qkv.permute(0, 2, 1, 3)  # [Batch, Head, SeqLen, Dims]
        q, k, v = qkv.chunk(3, dim=-1)
        values, attention = scaled_dot_product(q, k, v, mask=mask)
        values = values.permute(0, 2, 1, 3)  # [Batch, SeqLen, Head, Dims]
        values = values.reshape(batch_size, seq_length, self.embed_dim)
        o = self.W_o(values)
        return o, attention
