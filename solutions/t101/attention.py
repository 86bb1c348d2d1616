"""Scaled dot-product attention: NumPy functions and a single-head PyTorch module.

Symbols: B batch, L query length, S key/value length, d_model model width, d_k query/key
width, d_v value width, ... any leading batch axes (possibly none; they broadcast as in `@`).

Masks: bool, True = the query may attend to the key (PyTorch's `scaled_dot_product_attention`
convention, the opposite of `nn.MultiheadAttention`'s); a fully masked query gets zeros, not NaN.
"""

import numpy as np
import torch
from torch import nn

from .softmax import softmax


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
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"scaled_dot_product_attention: Q and K must have the same width d_k (last axis), "
            f"got Q of shape {Q.shape} and K of shape {K.shape}."
        )
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"scaled_dot_product_attention: K and V must have the same length S (second-to-last "
            f"axis), got K of shape {K.shape} and V of shape {V.shape}."
        )

    # 1) Compare every query with every key, scaled by 1/sqrt(d_k).
    scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1] ** 0.5  # (..., L, S)
    # 2) Hide the keys a query may not attend to.
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)  # (..., L, S)
    # 3) Normalise over the keys; 4) mix the values.
    weights = softmax(scores, axis=-1)  # (..., L, S)
    return weights @ V, weights  # (..., L, d_v), (..., L, S)


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
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (..., L, d_k), (..., L, d_k), (..., L, d_v)
    return scaled_dot_product_attention(Q, K, V, mask)


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) = (a . b) / (|a| |b|), as a Python float in [-1, 1].

    Shape: a (n,), b (n,) -> a Python `float`.
    Raises ValueError when a or b is not 1-D, when their lengths differ, or when either is the
    zero vector (its direction, hence the cosine, is undefined).
    Source: the class notebook's `cosine` helper; "torch.nn.functional.cosine_similarity".
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"cosine_similarity: expected two 1-D vectors of the same length, got shapes "
            f"{a.shape} and {b.shape}."
        )
    norm_a, norm_b = np.linalg.norm(a), np.linalg.norm(b)
    if norm_a == 0 or norm_b == 0:
        raise ValueError(
            f"cosine_similarity: the cosine of a zero vector is undefined, got |a| = {norm_a} "
            f"and |b| = {norm_b}."
        )
    return float(np.clip(a @ b / (norm_a * norm_b), -1.0, 1.0))


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
        super().__init__()
        d_k = d_model if d_k is None else d_k
        d_v = d_model if d_v is None else d_v
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (L, d_model) or (B, L, d_model), mask None or bool broadcastable to (..., L, L)
        (True = may attend) -> (output (..., L, d_v), weights (..., L, L))."""
        # 1) Project the same tokens three ways.
        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)  # Q, K: (..., L, d_k); V: (..., L, d_v)
        # 2) Scaled scores between every pair of tokens.
        scores = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5  # (..., L, L)
        # 3) Softmax over the keys; masked keys (and fully masked rows) weigh exactly 0.
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # (..., L, L)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)  # a fully masked row: NaN -> 0
        # 4) Mix the values.
        return weights @ V, weights  # (..., L, d_v), (..., L, L)
