"""The encoder after nanoGPT (karpathy, model.py, Block): pre-norm,
x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)), with the contract's AddNorm modules holding ln_1
and ln_2 (their `norm`). The stack applies the blocks in turn (nanoGPT's transformer.h; its
final ln_f belongs to the language model, not to the blocks)."""

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
        h = self.add_norm_1.norm(x)
        x = x + self.self_attn(h, h, h, mask)[0]
        x = x + self.feed_forward(self.add_norm_2.norm(x))
        return x


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
        )

    def forward(self, x, mask=None):
        for block in self.layers:
            x = block(x, mask)
        return x
