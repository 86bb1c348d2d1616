import torch
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)   # 512 -> 2048 in the paper
        self.W_2 = nn.Linear(d_ff, d_model)   # back to 512
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        hidden = torch.relu(self.W_1(x))
        return self.W_2(self.dropout(hidden))
