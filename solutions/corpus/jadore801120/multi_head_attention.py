"""Multi-head attention after jadore801120/attention-is-all-you-need-pytorch
(transformer/SubLayers.py and Modules.py): projections without bias, the queries divided by
the temperature sqrt(d_k) before the product, masked scores set to -1e9, dropout on the
softmax, the mask always given a head axis, and the sublayer's own residual, dropout and
LayerNorm(eps=1e-6) after the output projection. w_qs, w_ks, w_vs and fc are the contract's
W_q, W_k, W_v and W_o; n_head, d_k and d_v come from d_model and num_heads."""

import torch
import torch.nn.functional as F
from torch import nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, temperature, attn_dropout=0.1):
        super().__init__()
        self.temperature = temperature
        self.dropout = nn.Dropout(attn_dropout)

    def forward(self, q, k, v, mask=None):
        attn = torch.matmul(q / self.temperature, k.transpose(2, 3))
        if mask is not None:
            attn = attn.masked_fill(mask == 0, -1e9)
        attn = self.dropout(F.softmax(attn, dim=-1))
        output = torch.matmul(attn, v)
        return output, attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        n_head, d_k, d_v = num_heads, d_model // num_heads, d_model // num_heads
        self.n_head = n_head
        self.d_k = d_k
        self.d_v = d_v
        self.W_q = nn.Linear(d_model, n_head * d_k, bias=False)
        self.W_k = nn.Linear(d_model, n_head * d_k, bias=False)
        self.W_v = nn.Linear(d_model, n_head * d_v, bias=False)
        self.W_o = nn.Linear(n_head * d_v, d_model, bias=False)
        self.attention = ScaledDotProductAttention(temperature=d_k**0.5, attn_dropout=dropout)
        self.dropout = nn.Dropout(dropout)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)

    def forward(self, q, k, v, mask=None):
        d_k, d_v, n_head = self.d_k, self.d_v, self.n_head
        sz_b, len_q, len_k, len_v = q.size(0), q.size(1), k.size(1), v.size(1)
        residual = q
        q = self.W_q(q).view(sz_b, len_q, n_head, d_k)
        k = self.W_k(k).view(sz_b, len_k, n_head, d_k)
        v = self.W_v(v).view(sz_b, len_v, n_head, d_v)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        if mask is not None:
            mask = mask.unsqueeze(1)  # for head axis broadcasting
        q, attn = self.attention(q, k, v, mask=mask)
        q = q.transpose(1, 2).contiguous().view(sz_b, len_q, -1)
        q = self.dropout(self.W_o(q))
        q += residual
        q = self.layer_norm(q)
        return q, attn
