"""The feed-forward network after aladdinpersson/Machine-Learning-Collection
(transformer_from_scratch.py, TransformerBlock.feed_forward): Linear, ReLU, Linear, no dropout
(the block drops out after its norms). The nn.Sequential's two Linear modules are the
contract's W_1 and W_2; the contract's dropout argument is taken and not used."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.relu = nn.ReLU()
        self.W_2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.W_2(self.relu(self.W_1(x)))
