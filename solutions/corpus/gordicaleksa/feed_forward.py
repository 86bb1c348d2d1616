"""The feed-forward network after gordicaleksa/pytorch-original-transformer
(models/definitions/transformer_model.py, PositionwiseFeedForwardNet):
linear2(dropout(relu(linear1(x)))). linear1 and linear2 are the contract's W_1 and W_2; the
hidden width is the contract's d_ff (the repository's width_mult * model_dimension)."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(p=dropout)
        self.relu = nn.ReLU()

    def forward(self, representations_batch):
        return self.W_2(self.dropout(self.relu(self.W_1(representations_batch))))
