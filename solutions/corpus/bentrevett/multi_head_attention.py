"""Multi-head attention after bentrevett/pytorch-seq2seq ("6 - Attention is All You Need",
MultiHeadAttentionLayer): view(B, -1, h, head_dim).permute(0, 2, 1, 3), energy = Q K^T / scale
with scale = sqrt(head_dim), masked energy set to -1e10, x = dropout(attention) @ V, and the
softmax's attention returned; the mask used as it is (the tutorial's are (B, 1, 1, S) and
(B, 1, L, L)). fc_q, fc_k, fc_v, fc_o are the contract's W_q, W_k, W_v, W_o; the scale is
not moved to a device (no device argument here)."""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        assert d_model % num_heads == 0
        hid_dim, n_heads = d_model, num_heads
        self.hid_dim = hid_dim
        self.n_heads = n_heads
        self.head_dim = hid_dim // n_heads
        self.W_q = nn.Linear(hid_dim, hid_dim, bias=bias)
        self.W_k = nn.Linear(hid_dim, hid_dim, bias=bias)
        self.W_v = nn.Linear(hid_dim, hid_dim, bias=bias)
        self.W_o = nn.Linear(hid_dim, hid_dim, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.scale = torch.sqrt(torch.FloatTensor([self.head_dim]))

    def forward(self, query, key, value, mask=None):
        batch_size = query.shape[0]
        Q = self.W_q(query)
        K = self.W_k(key)
        V = self.W_v(value)
        Q = Q.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        K = K.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        V = V.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        energy = torch.matmul(Q, K.permute(0, 1, 3, 2)) / self.scale
        if mask is not None:
            energy = energy.masked_fill(mask == 0, -1e10)
        attention = torch.softmax(energy, dim=-1)
        x = torch.matmul(self.dropout(attention), V)
        x = x.permute(0, 2, 1, 3).contiguous()
        x = x.view(batch_size, -1, self.hid_dim)
        x = self.W_o(x)
        return x, attention
