"""Add & Norm after phlippe/uvadlc_notebooks (tutorial 6, EncoderBlock): x = x +
dropout(attn_out); x = norm1(x), its nn.LayerNorm called `norm`, with the contract's eps."""

from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, attn_out):
        x = x + self.dropout(attn_out)
        x = self.norm(x)
        return x
