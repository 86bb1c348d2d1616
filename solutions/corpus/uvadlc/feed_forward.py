"""The feed-forward network after phlippe/uvadlc_notebooks (tutorial 6, EncoderBlock's
linear_net): Linear, Dropout, ReLU(inplace=True), Linear; the two Linear modules are the
contract's W_1 and W_2."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.relu = nn.ReLU(inplace=True)
        self.W_2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.W_2(self.relu(self.dropout(self.W_1(x))))
