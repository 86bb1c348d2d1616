"""Add & Norm after hyunwoongko/transformer (models/layers/layer_norm.py and
models/blocks/encoder_layer.py): its own LayerNorm class (gamma, beta, the biased variance,
eps=1e-12 by default), built as LayerNorm(d_model=d_model) as the encoder layer builds it;
norm(x + dropout(sublayer_output)) as the layer computes it."""

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-12):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, unbiased=False, keepdim=True)
        out = (x - mean) / torch.sqrt(var + self.eps)
        out = self.gamma * out + self.beta
        return out


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = LayerNorm(d_model=d_model)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x, sublayer_output):
        return self.norm(x + self.dropout(sublayer_output))
