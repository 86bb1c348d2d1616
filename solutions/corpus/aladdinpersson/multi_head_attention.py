"""Multi-head attention after aladdinpersson/Machine-Learning-Collection's SelfAttention.

From transformer_from_scratch.py, SelfAttention:
- einsum "nqhd,nkhd->nhqk" for the energy, masked energy set to -1e20, softmax(energy /
  embed_size ** (1 / 2)), einsum back and fc_out; no dropout;
- the mask used as it is (the tutorial's are (N, 1, 1, S) and (N, 1, L, L)).

Changed for the contract:
- the projections are full-width nn.Linear(d_model, d_model, bias) applied before the split (the
  tutorial's are one (head_dim, head_dim) map shared by every head), named W_q, W_k, W_v and
  W_o (fc_out);
- the arguments come in the contract's order (query, key, value; the tutorial's are values,
  keys, query) and forward returns the attention too.
"""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        embed_size, heads = d_model, num_heads
        self.embed_size = embed_size
        self.heads = heads
        self.head_dim = embed_size // heads
        assert self.head_dim * heads == embed_size, "Embedding size needs to be divisible by heads"
        self.W_v = nn.Linear(embed_size, embed_size, bias=bias)
        self.W_k = nn.Linear(embed_size, embed_size, bias=bias)
        self.W_q = nn.Linear(embed_size, embed_size, bias=bias)
        self.W_o = nn.Linear(heads * self.head_dim, embed_size, bias=bias)

    def forward(self, query, keys, values, mask=None):
        N = query.shape[0]
        value_len, key_len, query_len = values.shape[1], keys.shape[1], query.shape[1]
        values = self.W_v(values).reshape(N, value_len, self.heads, self.head_dim)
        keys = self.W_k(keys).reshape(N, key_len, self.heads, self.head_dim)
        queries = self.W_q(query).reshape(N, query_len, self.heads, self.head_dim)
        energy = torch.einsum("nqhd,nkhd->nhqk", [queries, keys])
        if mask is not None:
            energy = energy.masked_fill(mask == 0, float("-1e20"))
        attention = torch.softmax(energy / (self.embed_size ** (1 / 2)), dim=3)
        out = torch.einsum("nhql,nlhd->nqhd", [attention, values]).reshape(
            N, query_len, self.heads * self.head_dim
        )
        out = self.W_o(out)
        return out, attention
