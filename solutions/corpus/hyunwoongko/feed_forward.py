"""The feed-forward network after hyunwoongko/transformer
(models/layers/position_wise_feed_forward.py): linear1, relu, dropout, linear2, with the
contract's names W_1 and W_2."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        x = self.W_1(x)
        x = self.relu(x)
        x = self.dropout(x)
        x = self.W_2(x)
        return x
