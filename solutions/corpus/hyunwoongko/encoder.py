"""The encoder after hyunwoongko/transformer (models/blocks/encoder_layer.py and
models/model/encoder.py, without the embedding): attention, dropout, norm(x + _x), then the
feed-forward likewise; the layers applied in turn. The layer's norm1/dropout1 and
norm2/dropout2 are the contract's AddNorm modules; attention and ffn are self_attn and
feed_forward."""

from torch import nn

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

    def forward(self, x, src_mask=None):
        _x = x
        x = self.self_attn(x, x, x, mask=src_mask)[0]
        x = self.add_norm_1(_x, x)
        _x = x
        x = self.feed_forward(x)
        x = self.add_norm_2(_x, x)
        return x


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
        )

    def forward(self, x, src_mask=None):
        for layer in self.layers:
            x = layer(x, src_mask)
        return x
