"""Multi-head attention after pbloem/former (former/modules.py, SelfAttention, the narrow
version): the heads folded into the batch axis with transpose(1, 2).contiguous().view(b * h, t,
s), queries and keys each divided by e ** (1/4) (e the embedding width) instead of the product
by sqrt(e), bmm, softmax (no dropout), bmm, and unifyheads. tokeys, toqueries, tovalues and unifyheads are
the contract's W_k, W_q, W_v and W_o (all four get the contract's bias); forward takes query,
key and value (former's takes one x), masks the scores with -inf where the caller's mask is
False (former masks the upper triangle) and returns the attention too."""

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        emb, heads = d_model, num_heads
        assert emb % heads == 0, f"Embedding dimension ({emb}) should be divisible by nr. of heads ({heads})"
        self.emb = emb
        self.heads = heads
        self.W_k = nn.Linear(emb, emb, bias=bias)
        self.W_q = nn.Linear(emb, emb, bias=bias)
        self.W_v = nn.Linear(emb, emb, bias=bias)
        self.W_o = nn.Linear(emb, emb, bias=bias)

    def forward(self, query, key, value, mask=None):
        b, t, e = query.size()
        tk = key.size(1)
        h = self.heads
        s = e // h
        keys = self.W_k(key).view(b, tk, h, s)
        queries = self.W_q(query).view(b, t, h, s)
        values = self.W_v(value).view(b, tk, h, s)
        keys = keys.transpose(1, 2).contiguous().view(b * h, tk, s)
        queries = queries.transpose(1, 2).contiguous().view(b * h, t, s)
        values = values.transpose(1, 2).contiguous().view(b * h, tk, s)
        queries = queries / (e ** (1 / 4))
        keys = keys / (e ** (1 / 4))
        dot = torch.bmm(queries, keys.transpose(1, 2))
        if mask is not None:
            m = torch.as_tensor(mask, dtype=torch.bool)
            m = (m.unsqueeze(1) if m.dim() == 3 else m).expand(b, h, t, tk).reshape(b * h, t, tk)
            dot = dot.masked_fill(~m, float("-inf"))
        dot = F.softmax(dot, dim=2)
        out = torch.bmm(dot, values).view(b, h, t, s)
        out = out.transpose(1, 2).contiguous().view(b, t, s * h)
        return self.W_o(out), dot.view(b, h, t, tk)
