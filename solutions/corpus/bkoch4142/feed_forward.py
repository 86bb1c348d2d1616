"""The feed-forward network after bkoch4142/attention-is-all-you-need-paper
(src/architectures/position_wise_feed_forward_net.py, PositionWiseFeedForwardNet):
w_2(dropout(relu(w_1(x)))), with an "optional dropout (not mentioned in the paper)" fixed at
p=0.1. w_1 and w_2 are the contract's W_1 and W_2; the contract's dropout argument is taken and
not used (the repository's class has none)."""

import torch
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.W_2(self.dropout(torch.relu(self.W_1(x))))
