"""Multi-head attention after huggingface/transformers (models/bert/modeling_bert.py,
BertSelfAttention with the dense projection of BertSelfOutput, and
ModuleUtilsMixin.get_extended_attention_mask): a ValueError when the hidden size is not a
multiple of the heads, query, key and value linears (always with a bias), transpose_for_scores
(view to (B, T, h, d) then permute(0, 2, 1, 3)), matmul, divided by math.sqrt(head size), the
additive extended mask (1 - mask) * torch.finfo(dtype).min added, softmax, dropout on the
probabilities, matmul with the values, permute back and view, then BertSelfOutput's dense.

A 3-D mask gets its head axis ([:, None, :, :]) as BERT gives it; the contract's 2-D (L, S) mask
is given [None, None] (BERT reads a 2-D mask as (B, S) padding) and a 4-D one is used as it is.
query, key, value, dense are the contract's W_q, W_k, W_v, W_o (BERT's always have a bias: the
contract's bias argument is taken and not used); forward also returns the probabilities."""

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"The hidden size ({d_model}) is not a multiple of the number of attention "
                f"heads ({num_heads})"
            )
        self.num_attention_heads = num_heads
        self.attention_head_size = int(d_model / num_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.W_q = nn.Linear(d_model, self.all_head_size)
        self.W_k = nn.Linear(d_model, self.all_head_size)
        self.W_v = nn.Linear(d_model, self.all_head_size)
        self.dropout = nn.Dropout(dropout)
        self.W_o = nn.Linear(d_model, d_model)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def get_extended_attention_mask(self, attention_mask, dtype):
        if attention_mask.dim() == 3:
            extended_attention_mask = attention_mask[:, None, :, :]
        elif attention_mask.dim() == 2:
            extended_attention_mask = attention_mask[None, None, :, :]
        else:
            extended_attention_mask = attention_mask
        extended_attention_mask = extended_attention_mask.to(dtype=dtype)
        return (1.0 - extended_attention_mask) * torch.finfo(dtype).min

    def forward(self, query, key, value, mask=None):
        query_layer = self.transpose_for_scores(self.W_q(query))
        key_layer = self.transpose_for_scores(self.W_k(key))
        value_layer = self.transpose_for_scores(self.W_v(value))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        if mask is not None:
            attention_scores = attention_scores + self.get_extended_attention_mask(
                torch.as_tensor(mask), attention_scores.dtype
            )
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(new_context_layer_shape)
        return self.W_o(context_layer), attention_probs
