"""The encoder after the Annotated Transformer (harvardnlp): pre-norm sublayer connections,
x + dropout(sublayer(norm(x))) (its SublayerConnection, "for code simplicity the norm is first"),
and a final LayerNorm after the stack. The contract's AddNorm modules hold the norm and the
dropout each connection uses."""

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

    def sublayer(self, connection, x, sublayer):
        return x + connection.dropout(sublayer(connection.norm(x)))

    def forward(self, x, mask=None):
        x = self.sublayer(self.add_norm_1, x, lambda x: self.self_attn(x, x, x, mask)[0])
        return self.sublayer(self.add_norm_2, x, self.feed_forward)


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)
