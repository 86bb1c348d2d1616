"""Multi-head attention after bkoch4142/attention-is-all-you-need-paper
(src/architectures/multi_head_attention.py, ScaledDotProductAttention and MultiHeadAttention,
with the W_q, W_k, W_v projections of src/architectures/transformer_encoder.py): an assert that
the width divides into the heads, each projection viewed (B, T, h, d_head) and transposed to
(B, h, T, d_head), scores Q K^T / sqrt(d_head), the mask used as it is (the repository's are
(B, 1, 1, S)) to fill entries equal to 0 with -inf, softmax over the keys, an "optional
dropout (not mentioned in the paper)" of p=0.1 on the weights, then the heads transposed back,
viewed (B, L, h * d_head) and projected by W_0.

The repository projects query, key and value in the encoder block (its W_q, W_k, W_v, every one
nn.Linear(d_model, d_model) with a bias) and hands the projections to this module: here they
are this module's W_q, W_k, W_v, applied first; W_0 is the contract's W_o. The contract's
dropout and bias arguments are taken and not used (the repository's attention dropout is fixed
at 0.1, its linears always have a bias); forward also returns the weights it used."""

import math

import torch
from torch import nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, d_head):
        super().__init__()
        self.d_head = d_head
        self.attention_dropout = nn.Dropout(p=0.1)

    def forward(self, q, k, v, mask=None):
        attention_weights = torch.matmul(q, k.transpose(-2, -1))
        scaled_attention_weights = attention_weights / math.sqrt(self.d_head)
        if mask is not None:
            scaled_attention_weights = scaled_attention_weights.masked_fill(
                mask == 0, float("-inf")
            )
        scaled_attention_weights = nn.functional.softmax(scaled_attention_weights, dim=-1)
        scaled_attention_weights = self.attention_dropout(scaled_attention_weights)
        weighted_v = torch.matmul(scaled_attention_weights, v)
        return weighted_v, scaled_attention_weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.n_heads = num_heads
        assert d_model % num_heads == 0
        self.d_head = d_model // num_heads
        self.dot_product_attention_layer = ScaledDotProductAttention(self.d_head)
        self.W_o = nn.Linear(d_model, d_model)

    def _split_into_heads(self, q, k, v):
        q = q.view(q.size(0), q.size(1), self.n_heads, self.d_head)
        k = k.view(k.size(0), k.size(1), self.n_heads, self.d_head)
        v = v.view(v.size(0), v.size(1), self.n_heads, self.d_head)
        return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

    def _concatenate_heads(self, attention_output):
        attention_output = attention_output.transpose(1, 2).contiguous()
        return attention_output.view(attention_output.size(0), attention_output.size(1), -1)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)
        q, k, v = self._split_into_heads(q, k, v)
        attention_output, weights = self.dot_product_attention_layer(q, k, v, mask)
        attention_output = self._concatenate_heads(attention_output)
        return self.W_o(attention_output), weights
