"""Multi-head attention after Kyubyong/transformer (modules.py, multihead_attention,
scaled_dot_product_attention, mask and ln; TensorFlow 1, its math written again in PyTorch):
Q, K, V each a dense layer with a bias; each split into h slices of the features stacked on the
batch axis, (h*N, T, d_model/h) (tf.concat(tf.split(Q, h, axis=2), axis=0)); scores
Q K^T / sqrt(d_k); masked keys get padding_num = -2**32 + 1 added (a float mask, 1 where a key
is hidden); softmax over the keys; dropout on the weights; @ V; the slices put back side by
side on the feature axis.

Then no output projection: the queries are added back and the sum goes through ln, the
repository's layer normalisation (gamma, beta, the biased variance of tf.nn.moments, epsilon
1e-8 inside the square root).

The dense layers are the contract's W_q, W_k, W_v (always with a bias, as use_bias=True); W_o
is created as the contract asks and never applied (the repository has no output projection);
the contract's boolean mask (True = may attend) is made the repository's float key mask (1 =
hidden), laid out (h*N, L, S) as its tf.tile lays it (a 3-D mask is shared by the heads); tf's
split by num_heads is torch.split by d_model // h; forward also returns the weights it used,
as (B, h, L, S)."""

import torch
from torch import nn


class Ln(nn.Module):
    def __init__(self, num_units, epsilon=1e-8):
        super().__init__()
        self.beta = nn.Parameter(torch.zeros(num_units))
        self.gamma = nn.Parameter(torch.ones(num_units))
        self.epsilon = epsilon

    def forward(self, inputs):
        mean = inputs.mean(dim=-1, keepdim=True)
        variance = ((inputs - mean) ** 2).mean(dim=-1, keepdim=True)
        normalized = (inputs - mean) / ((variance + self.epsilon) ** 0.5)
        return self.gamma * normalized + self.beta


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=True)
        self.W_k = nn.Linear(d_model, d_model, bias=True)
        self.W_v = nn.Linear(d_model, d_model, bias=True)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.ln = Ln(d_model)

    def scaled_dot_product_attention(self, Q, K, V, key_masks):
        d_k = Q.shape[-1]
        outputs = torch.matmul(Q, K.transpose(1, 2))  # (h*N, T_q, T_k)
        outputs = outputs / d_k**0.5
        if key_masks is not None:
            padding_num = -(2**32) + 1
            outputs = outputs + key_masks * padding_num
        outputs = torch.softmax(outputs, dim=-1)
        outputs = self.dropout(outputs)
        return torch.matmul(outputs, V), outputs  # (h*N, T_q, d_v)

    def forward(self, query, key, value, mask=None):
        h = self.num_heads
        N, T_q, d_model = query.shape
        T_k = key.shape[1]
        Q = self.W_q(query)
        K = self.W_k(key)
        V = self.W_v(value)
        width = d_model // h
        Q_ = torch.cat(torch.split(Q, width, dim=2), dim=0)  # (h*N, T_q, d_model/h)
        K_ = torch.cat(torch.split(K, width, dim=2), dim=0)  # (h*N, T_k, d_model/h)
        V_ = torch.cat(torch.split(V, width, dim=2), dim=0)  # (h*N, T_k, d_model/h)
        key_masks = None
        if mask is not None:
            mask = torch.as_tensor(mask, dtype=torch.bool)
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)  # one mask per sequence, tiled over the heads
            hidden = (~mask).to(Q.dtype).expand(N, h, T_q, T_k)
            key_masks = hidden.transpose(0, 1).reshape(h * N, T_q, T_k)  # head-major
        outputs, weights = self.scaled_dot_product_attention(Q_, K_, V_, key_masks)
        outputs = torch.cat(torch.split(outputs, N, dim=0), dim=2)  # (N, T_q, d_model)
        outputs = outputs + query
        outputs = self.ln(outputs)
        weights = weights.view(h, N, T_q, T_k).transpose(0, 1)  # (N, h, T_q, T_k)
        return outputs, weights
