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
        x = self.add_norm_1(x, self.self_attn(x, x, x, mask)[0])
        x = self.add_norm_2(x, self.feed_forward(x))
        return x


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)
        )

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask=mask)
        return x
