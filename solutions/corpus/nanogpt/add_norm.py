"""Add & Norm after nanoGPT (karpathy, model.py): its LayerNorm class ("LayerNorm but with an
optional bias"), F.layer_norm with eps 1e-5 written into forward; after the addition, as the
contract's post-norm AddNorm asks (nanoGPT's Block is pre-norm)."""

import torch
import torch.nn.functional as F
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = LayerNorm(d_model, bias=True)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer_output):
        return self.norm(x + self.dropout(sublayer_output))
