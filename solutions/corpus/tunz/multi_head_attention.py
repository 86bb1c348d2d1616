"""Multi-head attention after tunz/transformer-pytorch (model/transformer.py, MultiHeadAttention):
bias-free linear_q, linear_k, linear_v and output_layer of width head_size * att_size (att_size
= hidden_size // head_size, not checked), q scaled in place by att_size ** -0.5 before the
matmul with the transposed keys, the mask filled with -1e9 after an unsqueeze(1) for the heads,
softmax over the keys, dropout, @ v, heads merged and projected.

linear_q, linear_k, linear_v, output_layer are the contract's W_q, W_k, W_v, W_o (kept bias-free: the contract's bias argument
is taken and not used); head_size is num_heads. tunz's mask is True where a key is hidden: the
contract's (True where a query may attend) is inverted for it. No xavier initialisation, no cache; forward also returns the weights."""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super(MultiHeadAttention, self).__init__()
        hidden_size, head_size = d_model, num_heads
        self.head_size = head_size
        self.att_size = att_size = hidden_size // head_size
        self.scale = att_size**-0.5
        self.W_q = nn.Linear(hidden_size, head_size * att_size, bias=False)
        self.W_k = nn.Linear(hidden_size, head_size * att_size, bias=False)
        self.W_v = nn.Linear(hidden_size, head_size * att_size, bias=False)
        self.att_dropout = nn.Dropout(dropout)
        self.W_o = nn.Linear(head_size * att_size, hidden_size, bias=False)

    def forward(self, query, key, value, mask=None):
        d_k = d_v = self.att_size
        batch_size = query.size(0)
        q = self.W_q(query).view(batch_size, -1, self.head_size, d_k)
        k = self.W_k(key).view(batch_size, -1, self.head_size, d_k)
        v = self.W_v(value).view(batch_size, -1, self.head_size, d_v)
        q = q.transpose(1, 2)  # [b, h, q_len, d_k]
        v = v.transpose(1, 2)  # [b, h, v_len, d_v]
        k = k.transpose(1, 2).transpose(2, 3)  # [b, h, d_k, k_len]
        q.mul_(self.scale)
        x = torch.matmul(q, k)  # [b, h, q_len, k_len]
        if mask is not None:
            x.masked_fill_((~torch.as_tensor(mask, dtype=torch.bool)).unsqueeze(1), -1e9)
        x = torch.softmax(x, dim=3)
        weights = x = self.att_dropout(x)
        x = x.matmul(v)  # [b, h, q_len, attn]
        x = x.transpose(1, 2).contiguous()  # [b, q_len, h, attn]
        x = x.view(batch_size, -1, self.head_size * d_v)
        return self.W_o(x), weights
