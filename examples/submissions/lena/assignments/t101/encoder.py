"""
Encoder layer = MHA + Add&Norm + FFN + Add&Norm, and the stack of N of them.
"""
import torch.nn as nn

from .add_norm import AddNorm
from .feed_forward import PositionwiseFeedForward
from .multi_head_attention import MultiHeadAttention


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.add_norm_1 = AddNorm(d_model, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.add_norm_2 = AddNorm(d_model, dropout=dropout)

    def forward(self, x, mask=None):
        attn_out, _ = self.self_attn(x, x, x, mask=mask)
        x2 = self.add_norm_1(x, attn_out)
        ffn_out = self.feed_forward(x2)
        # residual connection around the feed forward
        return self.add_norm_2(x2, ffn_out)


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout=dropout) for _ in range(num_layers)]
        )

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask=mask)
        return x
