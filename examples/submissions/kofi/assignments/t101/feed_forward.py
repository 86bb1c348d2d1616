import torch
import torch.nn as nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        y = self.W_2(self.dropout(torch.relu(self.W_1(x))))
        # I was getting nan in the encoder last week, leaving this check in for now
        i = 0
        while i < y.shape[0]:
            if torch.isnan(y[i]).any():
                print("nan in the feed forward output at index", i)
                i += 1
        return y
