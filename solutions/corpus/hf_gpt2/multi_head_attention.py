"""Multi-head attention after huggingface/transformers (src/transformers/models/gpt2/
modeling_gpt2.py, GPT2Attention and its eager _attn): a ValueError for an indivisible width;
heads split with view and permute(0, 2, 1, 3); scores divided by a full([]) tensor of
value.size(-1) ** 0.5; masked scores set to the dtype's lowest finite value by torch.where;
softmax, attn_dropout on the weights; heads merged with permute and view; c_proj and
resid_dropout on the output. c_attn's query, key and value parts (q_attn's, for
cross-attention) are the contract's W_q, W_k, W_v, c_proj is W_o, and the causal buffer is the
caller's mask, used as it is."""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.embed_dim = d_model
        self.num_heads = num_heads
        self.head_dim = self.embed_dim // self.num_heads
        if self.head_dim * self.num_heads != self.embed_dim:
            raise ValueError(
                f"`embed_dim` must be divisible by num_heads (got `embed_dim`: {self.embed_dim}"
                f" and `num_heads`: {self.num_heads})."
            )
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (self.num_heads, self.head_dim)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (self.num_heads * self.head_dim,))

    def _attn(self, query, key, value, mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device
        )
        if mask is not None:
            mask_value = torch.finfo(attn_weights.dtype).min
            mask_value = torch.full([], mask_value, dtype=attn_weights.dtype)
            attn_weights = torch.where(mask, attn_weights, mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value), attn_weights

    def forward(self, query, key, value, mask=None):
        query = self._split_heads(self.W_q(query))
        key = self._split_heads(self.W_k(key))
        value = self._split_heads(self.W_v(value))
        attn_output, attn_weights = self._attn(query, key, value, mask)
        attn_output = self.W_o(self._merge_heads(attn_output))
        return self.resid_dropout(attn_output), attn_weights
