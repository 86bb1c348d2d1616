"""Multi-head attention after rasbt/LLMs-from-scratch (chapter 3, MultiHeadAttention):
view(b, num_tokens, num_heads, head_dim).transpose(1, 2), masked scores set to -inf in place,
softmax(attn_scores / keys.shape[-1] ** 0.5), dropout on the weights, context vectors merged
with transpose(1, 2).contiguous().view(b, num_tokens, d_out) and out_proj. W_query, W_key,
W_value and out_proj are the contract's W_q, W_k, W_v and W_o (the contract's bias is the
book's qkv_bias; out_proj keeps its bias, as in the book); the causal buffer is the mask the
caller gives (True = may attend), used as it is; forward takes query, key and value (the
book's takes one x) and returns the weights too."""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        d_in = d_out = d_model
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_q = nn.Linear(d_in, d_out, bias=bias)
        self.W_k = nn.Linear(d_in, d_out, bias=bias)
        self.W_v = nn.Linear(d_in, d_out, bias=bias)
        self.W_o = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        b, num_tokens, d_in = query.shape
        keys = self.W_k(key)
        queries = self.W_q(query)
        values = self.W_v(value)
        keys = keys.view(b, -1, self.num_heads, self.head_dim)
        values = values.view(b, -1, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if mask is not None:
            attn_scores.masked_fill_(~mask, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.W_o(context_vec)
        return context_vec, attn_weights
