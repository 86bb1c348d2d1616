"""Position-wise feed-forward network: the same two-layer MLP applied to every token."""

import torch
from torch import nn


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = W_2(dropout(relu(W_1(x)))) = max(0, x W_1 + b_1) W_2 + b_2, token by token.

    Every position is transformed independently with the same weights (a token never sees its
    neighbours here). Dropout (probability `dropout`, active in train() only) is applied to the
    hidden activations, after the ReLU.

    Symbols: d_model model width, d_ff inner (hidden) width; ... any leading axes, e.g. (B, L).

    Parameters, created in this order:
        W_1 = nn.Linear(d_model, d_ff)   (with bias)
        W_2 = nn.Linear(d_ff, d_model)   (with bias)
        then dropout = nn.Dropout(dropout) (no parameters).

    Shape:
        x: (..., d_model)    returns: (..., d_model)

    Dtypes: the output follows the parameters' dtype (float32 by default).

    Source: Vaswani et al. 2017, section 3.3, equation (2); the PyTorch documentation pages
    "torch.nn.Linear" and "torch.nn.ReLU" (nn.TransformerEncoderLayer names these two layers
    linear1/linear2; here they must be W_1/W_2, the names the graders load weights by).
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        raise NotImplementedError(
            "Position-wise feed-forward: PositionwiseFeedForward.__init__"
            " is not implemented yet; write it in assignments/t101/feed_forward.py."
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (..., d_model) -> W_2(dropout(relu(W_1(x)))) (..., d_model)."""
        raise NotImplementedError(
            "Position-wise feed-forward: PositionwiseFeedForward.forward"
            " is not implemented yet; write it in assignments/t101/feed_forward.py."
        )
