"""The feed-forward network after jadore801120/attention-is-all-you-need-pytorch
(transformer/SubLayers.py, PositionwiseFeedForward): w_2(relu(w_1(x))), dropout, the residual
x added, then its own LayerNorm(eps=1e-6). w_1 and w_2 are the contract's W_1 and W_2."""

import torch.nn.functional as F
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        residual = x
        x = self.W_2(F.relu(self.W_1(x)))
        x = self.dropout(x)
        x += residual
        x = self.layer_norm(x)
        return x
