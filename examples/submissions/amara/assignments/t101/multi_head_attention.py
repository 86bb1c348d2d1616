import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    """h heads of scaled dot-product attention, then W_o on the concatenation."""

    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model ({d_model}) has to be divisible by num_heads ({num_heads}) so every "
                f"head gets the same width."
            )
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.attn_drop = nn.Dropout(dropout)

    def _split_heads(self, t):
        # (B, n, d_model) -> (B, h, n, d_k)   head i = features i*d_k ... (i+1)*d_k
        B, n, _ = t.shape
        return t.reshape(B, n, self.h, self.d_k).permute(0, 2, 1, 3)

    def _merge_heads(self, t):
        # (B, h, n, d_k) -> (B, n, h*d_k)
        B, _, n, _ = t.shape
        return t.permute(0, 2, 1, 3).reshape(B, n, self.h * self.d_k)

    def forward(self, query, key, value, mask=None):
        q = self._split_heads(self.W_q(query))
        k = self._split_heads(self.W_k(key))
        v = self._split_heads(self.W_v(value))

        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.d_k)
        if mask is not None:
            mask = torch.as_tensor(mask, dtype=torch.bool, device=scores.device)
            if mask.dim() == 3:  # (B, L, S) -> same mask for every head
                mask = mask.unsqueeze(1)
            allowed_somewhere = mask.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf"))
            scores = scores.masked_fill(~allowed_somewhere, 0.0)
            attn = torch.softmax(scores, dim=-1).masked_fill(~allowed_somewhere, 0.0)
        else:
            attn = torch.softmax(scores, dim=-1)

        attn = self.attn_drop(attn)
        heads = torch.einsum("bhqk,bhkd->bhqd", attn, v)
        return self.W_o(self._merge_heads(heads)), attn
