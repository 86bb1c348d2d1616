"""The feed-forward network after bentrevett/pytorch-seq2seq ("6 - Attention is All You
Need", PositionwiseFeedforwardLayer): fc_2(dropout(relu(fc_1(x)))), with the contract's names
W_1 and W_2."""

import torch
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.dropout(torch.relu(self.W_1(x)))
        x = self.W_2(x)
        return x
