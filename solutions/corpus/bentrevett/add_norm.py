"""Add & Norm after bentrevett/pytorch-seq2seq ("6 - Attention is All You Need",
EncoderLayer): layer_norm(src + dropout(_src)), its nn.LayerNorm called `norm`, with the
contract's eps."""

from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, src, _src):
        return self.norm(src + self.dropout(_src))
