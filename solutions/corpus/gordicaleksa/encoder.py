"""The encoder after gordicaleksa/pytorch-original-transformer
(models/definitions/transformer_model.py, SublayerLogic, EncoderLayer and Encoder): pre-norm
sublayer connections, x + dropout(sublayer(norm(x))) ("LayerNorm before instead of after"),
self-attention then the point-wise net, and a LayerNorm after the stack ("a consequence of
using LayerNorm before instead of after the sublayer"). The contract's AddNorm modules hold the
norm and the dropout each SublayerLogic uses. The stack is the repository's: deep copies of one
built layer (independent parameters that start equal)."""

import copy

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
        self.model_dimension = d_model

    @staticmethod
    def sublayer_logic(connection, representations_batch, sublayer_module):
        return representations_batch + connection.dropout(
            sublayer_module(connection.norm(representations_batch))
        )

    def forward(self, src_representations_batch, src_mask=None):
        def encoder_self_attention(srb):
            return self.self_attn(srb, srb, srb, src_mask)[0]

        src_representations_batch = self.sublayer_logic(
            self.add_norm_1, src_representations_batch, encoder_self_attention
        )
        return self.sublayer_logic(self.add_norm_2, src_representations_batch, self.feed_forward)


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        encoder_layer = EncoderLayer(d_model, num_heads, d_ff, dropout)
        self.layers = nn.ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model)

    def forward(self, src_embeddings_batch, src_mask=None):
        src_representations_batch = src_embeddings_batch
        for encoder_layer in self.layers:
            src_representations_batch = encoder_layer(src_representations_batch, src_mask)
        return self.norm(src_representations_batch)
