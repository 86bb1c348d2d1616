"""Multi-head attention after lucidrains/vit-pytorch (vit_pytorch/vit.py, Attention): a
LayerNorm of the input first, one bias-free to_qkv linear chunked in three, the heads split
('b n (h d) -> b h n d', written with view and transpose: einops is not installed here),
matmul times dim_head ** -0.5, softmax, dropout, matmul, heads merged, and to_out (Linear then
Dropout) unless heads == 1 and dim_head == dim, where to_out is the identity.

to_qkv is the concatenation of the contract's W_q, W_k, W_v (bias-free whatever the contract's
bias; to_out's linear, W_o, has a bias); the norm is applied to query, key and value alike (ViT
attends from one x). ViT attends with no mask: the caller's mask is taken and not used. forward
also returns the attention."""

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        dim, heads = d_model, num_heads
        dim_head = dim // heads
        inner_dim = dim_head * heads
        self.project_out = not (heads == 1 and dim_head == dim)
        self.heads = heads
        self.scale = dim_head**-0.5
        self.norm = nn.LayerNorm(dim)
        self.attend = nn.Softmax(dim=-1)
        self.dropout = nn.Dropout(dropout)
        self.W_q = nn.Linear(dim, inner_dim, bias=False)
        self.W_k = nn.Linear(dim, inner_dim, bias=False)
        self.W_v = nn.Linear(dim, inner_dim, bias=False)
        self.W_o = nn.Linear(inner_dim, dim)
        self.out_dropout = nn.Dropout(dropout)

    def split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.heads, -1).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        query, key, value = self.norm(query), self.norm(key), self.norm(value)
        w = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
        q, _, _ = F.linear(query, w).chunk(3, dim=-1)
        _, k, _ = F.linear(key, w).chunk(3, dim=-1)
        _, _, v = F.linear(value, w).chunk(3, dim=-1)
        q, k, v = self.split(q), self.split(k), self.split(v)
        dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        attn = self.attend(dots)
        attn = self.dropout(attn)
        out = torch.matmul(attn, v)
        b, h, n, d = out.shape
        out = out.transpose(1, 2).reshape(b, n, h * d)
        if self.project_out:
            out = self.out_dropout(self.W_o(out))
        return out, attn
