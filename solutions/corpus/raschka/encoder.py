"""The encoder after rasbt/LLMs-from-scratch (chapter 4, TransformerBlock and GPTModel's
trf_blocks and final_norm): pre-norm shortcuts, x = x + drop_resid(att(norm1(x))) and the same
around the feed-forward, then a final LayerNorm after the blocks. norm1 and norm2 with the
dropout are the contract's AddNorm modules' norm and dropout."""

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
        shortcut = x
        x = self.add_norm_1.norm(x)
        x = self.self_attn(x, x, x, mask)[0]
        x = self.add_norm_1.dropout(x)
        x = x + shortcut
        shortcut = x
        x = self.add_norm_2.norm(x)
        x = self.feed_forward(x)
        x = self.add_norm_2.dropout(x)
        x = x + shortcut
        return x


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.Sequential(
            *[EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
        )
        self.final_norm = nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        for block in self.layers:
            x = block(x, mask)
        return self.final_norm(x)
