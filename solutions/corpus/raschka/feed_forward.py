"""The feed-forward network after rasbt/LLMs-from-scratch (chapter 4, GELU and FeedForward):
Linear(emb_dim, 4 * emb_dim), the book's GELU (the tanh approximation), Linear back; no dropout
(the block drops out after it). The two Linear modules are the contract's W_1 (d_model ->
d_ff) and W_2; the contract's dropout argument is taken and not used."""

import torch
from torch import nn


class GELU(nn.Module):
    def forward(self, x):
        return (
            0.5
            * x
            * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * x**3)))
        )


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.gelu = GELU()
        self.W_2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.W_2(self.gelu(self.W_1(x)))
