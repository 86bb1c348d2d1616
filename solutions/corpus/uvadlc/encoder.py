"""The encoder after phlippe/uvadlc_notebooks (tutorial 6, EncoderBlock and TransformerEncoder):
attention, residual and norm, then the feed-forward likewise; `for l in self.layers: x = l(x,
mask=mask)`. self_attn, norm1, linear_net and norm2 are the contract's sublayers."""

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

    def forward(self, x, mask=None):
        attn_out = self.self_attn(x, x, x, mask=mask)[0]
        x = self.add_norm_1(x, attn_out)
        linear_out = self.feed_forward(x)
        x = self.add_norm_2(x, linear_out)
        return x


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
        )

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask=mask)
        return x
