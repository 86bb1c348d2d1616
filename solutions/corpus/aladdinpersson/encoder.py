"""The encoder after aladdinpersson/Machine-Learning-Collection (transformer_from_scratch.py,
TransformerBlock and Encoder, without the embeddings): x = norm1(attention + query), then
norm2(forward + x); the layers applied in turn to out = layer(out, out, out, mask). The
block's attention, norm1/norm2 (with its dropout) and feed_forward are the contract's
sublayers."""

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

    def forward(self, query, mask=None):
        attention = self.self_attn(query, query, query, mask)[0]
        x = self.add_norm_1(query, attention)
        forward = self.feed_forward(x)
        out = self.add_norm_2(x, forward)
        return out


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
        )

    def forward(self, x, mask=None):
        out = x
        for layer in self.layers:
            out = layer(out, mask)
        return out
