"""Add & Norm: a residual connection followed by layer normalisation (post-norm)."""

import torch
from torch import nn


class AddNorm(nn.Module):
    """AddNorm(x, y) = LayerNorm(x + dropout(y)), where y = Sublayer(x) is the sublayer's output.

    LayerNorm normalises each token's d_model features on its own: (z - mean) / sqrt(var + eps)
    with the biased variance, then multiplies by `norm.weight` and adds `norm.bias`. Dropout
    (probability `dropout`, active in train() only) is applied to the sublayer output before
    the addition ("residual dropout"). This is the post-norm arrangement of the original paper,
    not the pre-norm variant.

    Symbols: d_model model width; ... any leading axes, e.g. (B, L).

    Parameter module, created first:
        norm = nn.LayerNorm(d_model, eps=eps)   (parameters norm.weight, norm.bias)
        then dropout = nn.Dropout(dropout) (no parameters).

    Shape:
        x: (..., d_model)    sublayer_output: (..., d_model)    returns: (..., d_model)

    Dtypes: the output follows the parameters' dtype (float32 by default).

    Source: Vaswani et al. 2017, section 3.1 ("LayerNorm(x + Sublayer(x))") and section 5.4
    (residual dropout); the PyTorch documentation page "torch.nn.LayerNorm".
    """

    def __init__(self, d_model: int, dropout: float = 0.0, eps: float = 1e-5):
        raise NotImplementedError(
            "Add & Norm: AddNorm.__init__ is not implemented yet;"
            " write it in assignments/t101/add_norm.py."
        )

    def forward(self, x: torch.Tensor, sublayer_output: torch.Tensor) -> torch.Tensor:
        """x, sublayer_output (..., d_model) -> norm(x + dropout(sublayer_output)) (..., d_model).

        Both inputs must have the same shape; the result has that shape too.
        """
        raise NotImplementedError(
            "Add & Norm: AddNorm.forward is not implemented yet;"
            " write it in assignments/t101/add_norm.py."
        )
