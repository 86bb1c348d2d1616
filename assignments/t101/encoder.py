"""The Transformer encoder: a layer (self-attention, then feed-forward) and a stack of layers."""

import torch
from torch import nn

from .add_norm import AddNorm
from .feed_forward import PositionwiseFeedForward
from .multi_head_attention import MultiHeadAttention


class EncoderLayer(nn.Module):
    """One encoder layer: multi-head self-attention, then a feed-forward, each with Add & Norm.

        x2  = add_norm_1(x, self_attn(x, x, x, mask)[0])    # LayerNorm(x + MultiHead(x, x, x))
        out = add_norm_2(x2, feed_forward(x2))              # LayerNorm(x2 + FFN(x2))

    Symbols: B batch, L sequence length, d_model model width, h = num_heads, d_ff inner width.

    Submodules, created in this order (each receives `dropout`):
        self_attn    = MultiHeadAttention(d_model, num_heads, dropout)
        add_norm_1   = AddNorm(d_model, dropout)
        feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        add_norm_2   = AddNorm(d_model, dropout)

    Shape:
        x: (B, L, d_model)
        mask: None, or bool broadcastable to (B, h, L, L) ((L, L), (B, L, L) or (B, h, L, L)),
            passed to self_attn unchanged; True = the query may attend to the key.
        returns: (B, L, d_model)

    Raises: ValueError (from MultiHeadAttention) when d_model is not divisible by num_heads.

    Source: Vaswani et al. 2017, section 3.1 (encoder); the PyTorch documentation page
    "torch.nn.TransformerEncoderLayer" (with activation="relu", norm_first=False,
    batch_first=True it computes the same function, with its boolean mask inverted).
    """

    self_attn: MultiHeadAttention
    add_norm_1: AddNorm
    feed_forward: PositionwiseFeedForward
    add_norm_2: AddNorm

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        raise NotImplementedError(
            "Encoder layer and stack: EncoderLayer.__init__"
            " is not implemented yet; write it in assignments/t101/encoder.py."
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, L, d_model), mask None or bool broadcastable to (B, h, L, L) (True = may
        attend) -> (B, L, d_model)."""
        raise NotImplementedError(
            "Encoder layer and stack: EncoderLayer.forward"
            " is not implemented yet; write it in assignments/t101/encoder.py."
        )


class Encoder(nn.Module):
    """A stack of `num_layers` independent encoder layers, applied in order.

        x_0 = x,   x_{i+1} = layers[i](x_i, mask),   returns x_{num_layers}

    No final LayerNorm is added (each post-norm layer already ends with one).

    Symbols: B batch, L sequence length, d_model model width, h = num_heads, d_ff inner width.

    Submodule:
        layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout)
                                for each of num_layers]), created first to last; the layers
        share no parameters (each is constructed anew, never copied or reused).

    Shape:
        x: (B, L, d_model)
        mask: None, or bool broadcastable to (B, h, L, L), given to every layer; True = the
            query may attend to the key.
        returns: (B, L, d_model)

    Raises: ValueError (from MultiHeadAttention) when d_model is not divisible by num_heads.

    Source: Vaswani et al. 2017, section 3.1 (a stack of N = 6 identical layers); the PyTorch
    documentation page "torch.nn.TransformerEncoder".
    """

    layers: nn.ModuleList

    def __init__(
        self, num_layers: int, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0
    ):
        raise NotImplementedError(
            "Encoder layer and stack: Encoder.__init__"
            " is not implemented yet; write it in assignments/t101/encoder.py."
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, L, d_model), mask None or bool broadcastable to (B, h, L, L) (True = may
        attend), given to every layer -> (B, L, d_model)."""
        raise NotImplementedError(
            "Encoder layer and stack: Encoder.forward"
            " is not implemented yet; write it in assignments/t101/encoder.py."
        )
