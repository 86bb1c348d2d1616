"""The encoder after bentrevett/pytorch-seq2seq ("6 - Attention is All You Need", EncoderLayer
and Encoder, without the embeddings): _src, _ = self_attention(src, src, src, src_mask); src =
self_attn_layer_norm(src + dropout(_src)); the same around the feed-forward; the layers in
turn. The two layer norms with their dropout are the contract's AddNorm modules."""

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

    def forward(self, src, src_mask=None):
        _src, _ = self.self_attn(src, src, src, src_mask)
        src = self.add_norm_1(src, _src)
        _src = self.feed_forward(src)
        src = self.add_norm_2(src, _src)
        return src


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
        )

    def forward(self, src, src_mask=None):
        for layer in self.layers:
            src = layer(src, src_mask)
        return src
