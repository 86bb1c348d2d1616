"""Multi-head attention after the einops documentation's MultiHeadAttentionNew.

From "Writing better code with PyTorch and einops": heads split head-first with rearrange
'b l (head k) -> head b l k', scores by einsum 'hblk,hbtk->hblt' divided by sqrt(d_k), the
mask given a leading axis (mask[None]) and filled with -inf, the softmax over axis 3, the heads
merged back with 'head b l v -> b l (head v)', then fc and dropout; the weights returned as
they are, head-first (h, B, L, S).

w_qs, w_ks, w_vs and fc are the contract's W_q, W_k, W_v and W_o; einops' rearrange is written
with view and permute; the contract's mask (True = may attend) is inverted to the
documentation's (True = hidden); the residual and LayerNorm after fc are left to the contract's
AddNorm."""

import numpy as np
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.n_head = num_heads
        d_k = d_v = d_model // num_heads
        self.W_q = nn.Linear(d_model, num_heads * d_k, bias=bias)
        self.W_k = nn.Linear(d_model, num_heads * d_k, bias=bias)
        self.W_v = nn.Linear(d_model, num_heads * d_v, bias=bias)
        self.W_o = nn.Linear(num_heads * d_v, d_model, bias=bias)
        self.dropout = nn.Dropout(p=dropout)

    def _heads_first(self, x):  # 'b t (head k) -> head b t k'
        b, t, _ = x.shape
        return x.view(b, t, self.n_head, -1).permute(2, 0, 1, 3)

    def forward(self, q, k, v, mask=None):
        q = self._heads_first(self.W_q(q))
        k = self._heads_first(self.W_k(k))
        v = self._heads_first(self.W_v(v))
        attn = torch.einsum("hblk,hbtk->hblt", q, k) / np.sqrt(q.shape[-1])
        if mask is not None:
            attn = attn.masked_fill(~mask[None], -np.inf)
        attn = torch.softmax(attn, dim=3)
        output = torch.einsum("hblt,hbtv->hblv", attn, v)
        h, b, l, d = output.shape  # 'head b l v -> b l (head v)'
        output = output.permute(1, 2, 0, 3).reshape(b, l, h * d)
        output = self.dropout(self.W_o(output))
        return output, attn
