"""Multi-head attention after gordicaleksa/pytorch-original-transformer
(models/definitions/transformer_model.py, MultiHeadedAttention): an assert that the width
divides into the heads, three deep copies of one nn.Linear for the query, key and value (so
they start equal), each input projected and viewed (B, -1, h, d_head).transpose(1, 2), scores
Q K^T / sqrt(d_head), the mask used as it is (the repository's are (B, 1, 1, S) and
(B, 1, T, T)) to fill False entries with -inf in place, softmax over the keys, dropout on the
weights, then the heads transposed back, reshaped and projected.

qkv_nets and out_projection_net are the contract's W_q, W_k, W_v and W_o, with its bias;
model_dimension, number_of_heads, dropout_probability are d_model, num_heads, dropout; no
log_attention_weights (forward returns the weights it used instead of caching them)."""

import copy
import math

import torch
from torch import nn


def get_clones(module, num_of_deep_copies):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(num_of_deep_copies)])


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        assert d_model % num_heads == 0, "Model dimension must be divisible by the number of heads."
        self.head_dimension = int(d_model / num_heads)
        self.number_of_heads = num_heads
        self.W_q, self.W_k, self.W_v = get_clones(nn.Linear(d_model, d_model, bias=bias), 3)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.attention_dropout = nn.Dropout(p=dropout)
        self.softmax = nn.Softmax(dim=-1)

    def attention(self, query, key, value, mask):
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.head_dimension)
        if mask is not None:
            scores.masked_fill_(mask == torch.tensor(False), float("-inf"))
        attention_weights = self.softmax(scores)
        attention_weights = self.attention_dropout(attention_weights)
        intermediate = torch.matmul(attention_weights, value)
        return intermediate, attention_weights

    def forward(self, query, key, value, mask=None):
        batch_size = query.shape[0]
        query, key, value = [
            net(x).view(batch_size, -1, self.number_of_heads, self.head_dimension).transpose(1, 2)
            for net, x in zip((self.W_q, self.W_k, self.W_v), (query, key, value))
        ]
        intermediate, attention_weights = self.attention(query, key, value, mask)
        reshaped = intermediate.transpose(1, 2).reshape(
            batch_size, -1, self.number_of_heads * self.head_dimension
        )
        return self.W_o(reshaped), attention_weights
