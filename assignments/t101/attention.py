"""Scaled dot-product attention: NumPy functions and a single-head PyTorch module.

Symbols: B batch, L query length, S key/value length, d_model model width, d_k query/key
width, d_v value width, ... any leading batch axes (possibly none; they broadcast as in `@`).

Masks: bool, True = the query may attend to the key (PyTorch's `scaled_dot_product_attention`
convention, the opposite of `nn.MultiheadAttention`'s); a fully masked query gets zeros, not NaN.

You may reuse your softmax: `from .softmax import softmax` (a relative import).
"""

import numpy as np
import torch
from torch import nn


def scaled_dot_product_attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, with an optional boolean mask.

    K^T swaps only the last two axes of K; masked scores become -inf before the softmax over
    the keys (last axis). A fully masked query row gets zero weights and a zero output.

    Shape:
        Q: (..., L, d_k)    K: (..., S, d_k)    V: (..., S, d_v)
        mask: None, or bool broadcastable to (..., L, S); True = the query may attend the key.
        returns: (output (..., L, d_v), weights (..., L, S)); the leading axes broadcast.

    Dtypes: float32 inputs give float32 results, float64 give float64; integers give float64.
    Raises ValueError (a sentence naming both shapes) when Q and K widths (last axes) differ,
    or when K and V lengths (second-to-last axes) differ.
    Source: Vaswani et al. 2017, section 3.2.1, equation (1); the PyTorch documentation page
    "torch.nn.functional.scaled_dot_product_attention" (same mask convention).
    """
    raise NotImplementedError(
        "Scaled dot-product attention: scaled_dot_product_attention(Q, K, V, mask)"
        " is not implemented yet; write it in assignments/t101/attention.py."
    )


def self_attention(
    X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention of X: scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask).

    Shape:
        X: (..., L, d_model)   W_q: (d_model, d_k)   W_k: (d_model, d_k)   W_v: (d_model, d_v)
        mask: None, or bool broadcastable to (..., L, L); True = the query may attend the key.
        returns: (output (..., L, d_v), weights (..., L, L)).
    Dtypes and errors: as `scaled_dot_product_attention` (ValueError when W_q and W_k give
    different widths). Source: Vaswani et al. 2017, section 3.2.1; the class notebook.
    """
    raise NotImplementedError(
        "Scaled dot-product attention: self_attention(X, W_q, W_k, W_v, mask)"
        " is not implemented yet; write it in assignments/t101/attention.py."
    )


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) = (a . b) / (|a| |b|), as a Python float in [-1, 1].

    Shape: a (n,), b (n,) -> a Python `float`.
    Raises ValueError when a or b is not 1-D, when their lengths differ, or when either is the
    zero vector (its direction, hence the cosine, is undefined).
    Source: the class notebook's `cosine` helper; "torch.nn.functional.cosine_similarity".
    """
    raise NotImplementedError(
        "Scaled dot-product attention: cosine_similarity(a, b)"
        " is not implemented yet; write it in assignments/t101/attention.py."
    )


class SelfAttention(nn.Module):
    """Single-head self-attention, softmax(Q K^T / sqrt(d_k)) V with Q = W_q(x), K = W_k(x),
    V = W_v(x) (no bias), as in the class notebook; masked keys weigh 0.

    Parameters, created in this order (a seeded run reproduces the class notebook):
        W_q = nn.Linear(d_model, d_k, bias=False)
        W_k = nn.Linear(d_model, d_k, bias=False)
        W_v = nn.Linear(d_model, d_v, bias=False)
    `d_k` and `d_v` default to `d_model`.
    Shape:
        x: (L, d_model) or (B, L, d_model)
        mask: None, or bool broadcastable to (..., L, L); True = the query may attend the key.
        returns: (output (..., L, d_v), weights (..., L, L)), where ... is () or (B,).
    Dtypes: the output follows the parameters' dtype (float32 by default).
    Source: Vaswani et al. 2017, section 3.2.1; the PyTorch documentation pages
    "torch.nn.Linear" and "torch.nn.functional.scaled_dot_product_attention".
    """

    def __init__(self, d_model: int, d_k: int | None = None, d_v: int | None = None) -> None:
        raise NotImplementedError(
            "Scaled dot-product attention: SelfAttention.__init__"
            " is not implemented yet; write it in assignments/t101/attention.py."
        )

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (L, d_model) or (B, L, d_model), mask None or bool broadcastable to (..., L, L)
        (True = may attend) -> (output (..., L, d_v), weights (..., L, L))."""
        raise NotImplementedError(
            "Scaled dot-product attention: SelfAttention.forward"
            " is not implemented yet; write it in assignments/t101/attention.py."
        )
