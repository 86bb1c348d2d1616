"""The feed-forward after tunz/transformer-pytorch (model/transformer.py, FeedForwardNetwork):
layer1, ReLU, dropout, layer2, one statement each. layer1 and layer2 are the contract's W_1 and
W_2; hidden_size, filter_size and dropout_rate are d_model, d_ff and dropout; no xavier
initialisation."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super(PositionwiseFeedForward, self).__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(dropout)
        self.W_2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        x = self.W_1(x)
        x = self.relu(x)
        x = self.dropout(x)
        x = self.W_2(x)
        return x
