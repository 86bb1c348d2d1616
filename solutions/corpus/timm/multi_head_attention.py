"""Multi-head attention after pytorch-image-models' Attention (timm), its unfused path.

From timm/models/vision_transformer.py and timm/layers/attention.py: one packed qkv projection
reshaped to (B, N, 3, h, d_k) and permuted to (3, B, h, N, d_k), so that q, k and v each take
their own third before the heads are split; q scaled by d_k ** -0.5 before the product; an
additive mask added to the scores; softmax, attn_drop on the weights, proj and proj_drop on
the output.

The packed qkv is the concatenation of the contract's W_q(query), W_k(key) and W_v(value);
proj is W_o; the contract's boolean mask made timm's additive one (-inf where False), added as
it is."""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        assert d_model % num_heads == 0, "dim should be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.scale = self.head_dim**-0.5
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.attn_drop = nn.Dropout(dropout)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.proj_drop = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        B, N, C = query.shape
        qkv = torch.cat([self.W_q(query), self.W_k(key), self.W_v(value)], dim=-1)
        qkv = qkv.reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        if mask is not None:
            additive = torch.zeros(mask.shape, dtype=attn.dtype).masked_fill(~mask, float("-inf"))
            attn = attn + additive
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = attn @ v
        x = x.transpose(1, 2).reshape(B, N, C)
        x = self.W_o(x)
        x = self.proj_drop(x)
        return x, attn
