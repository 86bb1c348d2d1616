"""Add & Norm after hkproj/pytorch-transformer (model.py, LayerNormalization and
ResidualConnection): a LayerNorm class of its own, alpha * (x - mean) / (std + eps) + bias with
x.std (Bessel's unbiased estimate) and eps = 10 ** -6 added to the standard deviation. The
repository's ResidualConnection is pre-norm (x + dropout(sublayer(norm(x)))); here the norm is
applied where the contract puts it, to x + dropout(sublayer_output). The contract's eps argument
is taken and not used."""

import torch
from torch import nn


class LayerNormalization(nn.Module):
    def __init__(self, features: int, eps: float = 10**-6) -> None:
        super().__init__()
        self.eps = eps
        self.alpha = nn.Parameter(torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        std = x.std(dim=-1, keepdim=True)
        return self.alpha * (x - mean) / (std + self.eps) + self.bias


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.norm = LayerNormalization(d_model)

    def forward(self, x, sublayer_output):
        return self.norm(x + self.dropout(sublayer_output))
