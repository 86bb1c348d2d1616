"""The encoder after bkoch4142/attention-is-all-you-need-paper
(src/architectures/transformer_encoder.py, TransformerEncoderBlock and TransformerEncoder):
post-norm, mha_out = add_and_norm_1(x, dropout(mha(x, x, x, mask))), then
add_and_norm_2(mha_out, dropout(ffn(mha_out))); the blocks in turn. The block's dropout layers
with its AddAndNorm layers are the contract's AddNorm modules (which take the dropout); its W_q,
W_k, W_v projections are the multi-head attention's own (the contract's); the attention and the
feed-forward are built as the repository builds them, MultiHeadAttention(d_model, n_heads) and
PositionWiseFeedForwardNet(d_model, d_ff), without the dropout (each keeps its own)."""

from torch import nn

from .add_norm import AddNorm
from .feed_forward import PositionwiseFeedForward
from .multi_head_attention import MultiHeadAttention


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.add_norm_1 = AddNorm(d_model, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.add_norm_2 = AddNorm(d_model, dropout)

    def forward(self, x, mask=None):
        mha_out = self.self_attn(x, x, x, mask)[0]
        mha_out = self.add_norm_1(x, mha_out)
        ffn_out = self.feed_forward(mha_out)
        return self.add_norm_2(mha_out, ffn_out)


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
        )

    def forward(self, x, mask=None):
        for encoder_block in self.layers:
            x = encoder_block(x, mask)
        return x
