"""Multi-head attention after pytorch/pytorch (torch/nn/functional.py,
multi_head_attention_forward, the path without need_weights=False): the packed in_proj weight
(here the concatenation of W_q, W_k, W_v and of their biases) applied with
_in_projection_packed's linear and chunk, a boolean attn_mask turned into a float mask of -inf
(masked_fill of zeros), a 3-D mask expected as (B * h, L, S), the heads folded into the batch
(view(L, B * h, d).transpose), q scaled by sqrt(1 / E) and baddbmm(attn_mask, q_scaled, k^T),
softmax, dropout, bmm, out_proj, and the per-head weights (average_attn_weights=False).

The contract's inputs are batch first (transposed to PyTorch's sequence-first and back, as
nn.MultiheadAttention does); its boolean mask is inverted to PyTorch's (True = not allowed); a
(B, L, S) mask is repeated over the heads with repeat_interleave and a (B, h, L, S) one reshaped
to (B * h, L, S). W_o is out_proj."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.embed_dim = d_model
        self.num_heads = num_heads
        self.dropout = dropout
        self.head_dim = d_model // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise ValueError(f"embed_dim ({d_model}) must be divisible by num_heads ({num_heads})")
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def in_projection_packed(self, q, k, v):
        w = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
        b = (
            None
            if self.W_q.bias is None
            else torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])
        )
        w_q, w_k, w_v = w.chunk(3)
        b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
        return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)

    def forward(self, query, key, value, mask=None):
        query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        tgt_len, bsz, embed_dim = query.shape
        src_len = key.shape[0]
        q, k, v = self.in_projection_packed(query, key, value)
        attn_mask = None
        if mask is not None:
            attn_mask = ~torch.as_tensor(mask, dtype=torch.bool)
            if attn_mask.dim() == 3:
                attn_mask = attn_mask.repeat_interleave(self.num_heads, dim=0)
            elif attn_mask.dim() == 4:
                attn_mask = attn_mask.reshape(bsz * self.num_heads, tgt_len, src_len)
            else:
                attn_mask = attn_mask.unsqueeze(0)
            attn_mask = torch.zeros_like(attn_mask, dtype=q.dtype).masked_fill_(
                attn_mask, float("-inf")
            )
        q = q.view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        k = k.view(k.shape[0], bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.view(v.shape[0], bsz * self.num_heads, self.head_dim).transpose(0, 1)
        dropout_p = self.dropout if self.training else 0.0
        B, Nt, E = q.shape
        q_scaled = q * math.sqrt(1.0 / float(E))
        if attn_mask is not None:
            attn_output_weights = torch.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            attn_output_weights = torch.bmm(q_scaled, k.transpose(-2, -1))
        attn_output_weights = F.softmax(attn_output_weights, dim=-1)
        if dropout_p > 0.0:
            attn_output_weights = F.dropout(attn_output_weights, p=dropout_p)
        attn_output = torch.bmm(attn_output_weights, v)
        attn_output = attn_output.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
        attn_output = self.W_o(attn_output)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        attn_output_weights = attn_output_weights.view(bsz, self.num_heads, tgt_len, src_len)
        return attn_output.transpose(1, 0), attn_output_weights
