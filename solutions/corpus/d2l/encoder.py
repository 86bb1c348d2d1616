"""The encoder after Dive into Deep Learning (d2l.ai, section 11.7, TransformerEncoderBlock and
TransformerEncoder, without the embedding and positional encoding): Y = addnorm1(X,
attention(X, X, X)), then addnorm2(Y, ffn(Y)); the blocks applied in turn. Attribute names are
the contract's."""

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

    def forward(self, X, mask=None):
        Y = self.add_norm_1(X, self.self_attn(X, X, X, mask)[0])
        return self.add_norm_2(Y, self.feed_forward(Y))


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout))

    def forward(self, X, mask=None):
        for blk in self.layers:
            X = blk(X, mask)
        return X
