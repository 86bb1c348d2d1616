"""Multi-head attention after labmlai/annotated_deep_learning_paper_implementations
(labml_nn/transformers/mha.py, PrepareForMultiHeadAttention and MultiHeadAttention): sequence
first ([seq_len, batch_size, d_model]), each projection a linear viewed as (..., heads, d_k),
the scores by einsum('ibhd,jbhd->ijbh'), multiplied by 1 / sqrt(d_k), masked with -inf where the
mask is 0, softmax over dim 1 (the keys), dropout, einsum('ijbh,jbhd->ibhd') with the values,
reshape, output linear. The value projection and the output linear always have a bias (labml's
bias argument reaches query and key only); d_model // heads is not checked.

The contract's batch first inputs are transposed to labml's layout and back; its mask is made
labml's [seq_len_q, seq_len_k, batch] (a 4-D one [seq_len_q, seq_len_k, batch, heads]) and
unsqueezed for the heads as labml's prepare_mask does. PrepareForMultiHeadAttention is a
function of the contract's W_q, W_k, W_v (its linears); output is W_o; forward also returns attn as (B, h, L, S)."""

import math

import torch
from torch import nn


def prepare_for_multi_head_attention(linear, heads, d_k, x):
    head_shape = x.shape[:-1]
    x = linear(x)
    return x.view(*head_shape, heads, d_k)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        heads = num_heads
        self.d_k = d_model // heads
        self.heads = heads
        self.W_q = nn.Linear(d_model, heads * self.d_k, bias=bias)
        self.W_k = nn.Linear(d_model, heads * self.d_k, bias=bias)
        self.W_v = nn.Linear(d_model, heads * self.d_k, bias=True)
        self.softmax = nn.Softmax(dim=1)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.scale = 1 / math.sqrt(self.d_k)

    def get_scores(self, query, key):
        return torch.einsum("ibhd,jbhd->ijbh", query, key)

    def prepare_mask(self, mask):
        mask = torch.as_tensor(mask)
        if mask.dim() == 4:
            return mask.permute(2, 3, 0, 1)
        mask = mask.permute(1, 2, 0) if mask.dim() == 3 else mask.unsqueeze(-1)
        return mask.unsqueeze(-1)

    def forward(self, query, key, value, mask=None):
        query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        seq_len, batch_size, _ = query.shape
        if mask is not None:
            mask = self.prepare_mask(mask)
        query = prepare_for_multi_head_attention(self.W_q, self.heads, self.d_k, query)
        key = prepare_for_multi_head_attention(self.W_k, self.heads, self.d_k, key)
        value = prepare_for_multi_head_attention(self.W_v, self.heads, self.d_k, value)
        scores = self.get_scores(query, key)
        scores *= self.scale
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        attn = self.softmax(scores)
        attn = self.dropout(attn)
        x = torch.einsum("ijbh,jbhd->ibhd", attn, value)
        x = x.reshape(seq_len, batch_size, -1)
        return self.W_o(x).transpose(0, 1), attn.permute(2, 3, 0, 1)
