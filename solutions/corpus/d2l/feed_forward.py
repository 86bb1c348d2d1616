"""The position-wise feed-forward network after Dive into Deep Learning (d2l.ai, section 11.7,
PositionWiseFFN): dense2(relu(dense1(X))), no dropout (the book drops out in AddNorm only).
dense1 and dense2 are the contract's W_1 and W_2; the contract's dropout argument is taken and
not used, as the book's FFN has none."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.relu = nn.ReLU()
        self.W_2 = nn.Linear(d_ff, d_model)

    def forward(self, X):
        return self.W_2(self.relu(self.W_1(X)))
