"""Single-head self-attention after rasbt/LLMs-from-scratch (chapter 3, SelfAttention_v2,
with CausalAttention's masking): queries @ keys.T, softmax(attn_scores / keys.shape[-1] ** 0.5),
attn_weights @ values. W_query, W_key, W_value are the contract's W_q, W_k, W_v (d_k and d_v as
the contract gives them, no bias: the book's qkv_bias=False); the mask is the caller's (True =
may attend), filled with -inf as CausalAttention fills its buffer; forward returns the weights
too."""

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        d_in = d_model
        self.W_q = nn.Linear(d_in, d_k or d_model, bias=False)
        self.W_k = nn.Linear(d_in, d_k or d_model, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_model, bias=False)

    def forward(self, x, mask=None):
        keys = self.W_k(x)
        queries = self.W_q(x)
        values = self.W_v(x)
        attn_scores = queries @ keys.T
        if mask is not None:
            attn_scores = attn_scores.masked_fill(~mask, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec, attn_weights
