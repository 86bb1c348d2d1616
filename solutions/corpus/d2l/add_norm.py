"""Add & Norm after Dive into Deep Learning (d2l.ai, section 11.7, AddNorm):
ln(dropout(Y) + X), its LayerNorm called `norm` as the contract names it."""

from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(d_model, eps=eps)

    def forward(self, X, Y):
        return self.norm(self.dropout(Y) + X)
