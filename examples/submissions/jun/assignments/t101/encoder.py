import torch.nn as nn

from .add_norm import AddNorm
from .feed_forward import PositionwiseFeedForward
from .multi_head_attention import MultiHeadAttention


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.add_norm_1 = AddNorm(d_model, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.add_norm_2 = AddNorm(d_model, dropout)

    def forward(self, x, mask=None):
        x2 = self.add_norm_1(x, self.self_attn(x, x, x, mask)[0])
        return self.add_norm_2(x2, self.feed_forward(x2))


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        layer = EncoderLayer(d_model, num_heads, d_ff, dropout)
        print("building encoder with", num_layers, "layers")
        # N x the same block, like the N x in the paper figure
        self.layers = nn.ModuleList([layer for _ in range(num_layers)])

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask)
        return x
