"""Multi-head attention after graykode/nlp-tutorial (5-1.Transformer/Transformer.py,
ScaledDotProductAttention and MultiHeadAttention): W_Q, W_K, W_V (each with a bias) viewed
(B, -1, h, d_k).transpose(1, 2); the mask given a head axis and repeated over the heads,
attn_mask.unsqueeze(1).repeat(1, n_heads, 1, 1); scores Q K^T / np.sqrt(d_k), filled in place
with -1e9 where the mask is True (the tutorial's mask is True where a key is padding); softmax
over the keys, @ V, no dropout; the heads transposed back and viewed (B, -1, h * d_v), the
output linear, then the sublayer's own residual and LayerNorm: layer_norm(output + Q).

W_Q, W_K, W_V and linear are the contract's W_q, W_k, W_v and W_o (nn.Linear's default bias,
as the tutorial's); n_heads, d_k and d_v (globals there) come from num_heads and d_model; the
contract's mask (True where the query may attend) is inverted for it, and a missing mask masks
nothing; the contract's dropout and bias arguments are taken and not used."""

import numpy as np
import torch
from torch import nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, d_k):
        super().__init__()
        self.d_k = d_k

    def forward(self, Q, K, V, attn_mask):
        scores = torch.matmul(Q, K.transpose(-1, -2)) / np.sqrt(self.d_k)
        if attn_mask is not None:
            scores.masked_fill_(attn_mask, -1e9)
        attn = nn.Softmax(dim=-1)(scores)
        context = torch.matmul(attn, V)
        return context, attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.n_heads = num_heads
        self.d_k = self.d_v = d_model // num_heads
        self.W_q = nn.Linear(d_model, self.d_k * self.n_heads)
        self.W_k = nn.Linear(d_model, self.d_k * self.n_heads)
        self.W_v = nn.Linear(d_model, self.d_v * self.n_heads)
        self.W_o = nn.Linear(self.n_heads * self.d_v, d_model)
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, Q, K, V, mask=None):
        n_heads, d_k, d_v = self.n_heads, self.d_k, self.d_v
        residual, batch_size = Q, Q.size(0)
        q_s = self.W_q(Q).view(batch_size, -1, n_heads, d_k).transpose(1, 2)
        k_s = self.W_k(K).view(batch_size, -1, n_heads, d_k).transpose(1, 2)
        v_s = self.W_v(V).view(batch_size, -1, n_heads, d_v).transpose(1, 2)
        attn_mask = None
        if mask is not None:
            attn_mask = ~torch.as_tensor(mask, dtype=torch.bool)  # True = padding, as there
            attn_mask = attn_mask.unsqueeze(1).repeat(1, n_heads, 1, 1)
        context, attn = ScaledDotProductAttention(d_k)(q_s, k_s, v_s, attn_mask)
        context = context.transpose(1, 2).contiguous().view(batch_size, -1, n_heads * d_v)
        output = self.W_o(context)
        return self.layer_norm(output + residual), attn
