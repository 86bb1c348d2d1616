import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"num_heads={num_heads} does not divide d_model={d_model}; "
                "pick a number of heads that splits the width evenly."
            )
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.p = dropout

    def heads(self, x):
        # (B, n, d_model) -> (B, n, h, d_k) -> (B, h, n, d_k)
        return x.unflatten(-1, (self.h, self.d_k)).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        Q = self.heads(self.W_q(query))
        K = self.heads(self.W_k(key))
        V = self.heads(self.W_v(value))

        scores = torch.matmul(Q, K.transpose(-1, -2)) / self.d_k ** 0.5  # (B, h, L, S)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask[:, None]
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        w = F.softmax(scores, dim=-1)
        if mask is not None:
            w = torch.where(mask.any(-1, keepdim=True), w, torch.zeros_like(w))
        w = F.dropout(w, p=self.p, training=self.training)

        out = torch.matmul(w, V)               # (B, h, L, d_k)
        out = out.transpose(1, 2).flatten(2)   # (B, L, d_model)
        return self.W_o(out), w
