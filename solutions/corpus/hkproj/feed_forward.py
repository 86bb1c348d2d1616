"""The feed-forward after hkproj/pytorch-transformer (model.py, FeedForwardBlock):
linear_2(dropout(torch.relu(linear_1(x)))), the linears renamed W_1 and W_2."""

import torch
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.W_2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.W_2(self.dropout(torch.relu(self.W_1(x))))
