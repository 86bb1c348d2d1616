"""The position-wise feed-forward network after the Annotated Transformer (harvardnlp):
w_2(dropout(relu(w_1(x)))), with the contract's names W_1 and W_2."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.W_2(self.dropout(self.W_1(x).relu()))
