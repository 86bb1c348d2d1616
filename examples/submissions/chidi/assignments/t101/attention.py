"""Scaled dot-product attention: NumPy functions and a single-head PyTorch module.

Symbols used in every shape below:
    B        batch size
    L        query length (number of query tokens)
    S        key/value length (number of key and value tokens)
    d_model  model width (features of one input token)
    d_k      query/key width
    d_v      value width
    ...      any number of leading batch axes (possibly none), broadcast like NumPy's `@`

Masks: a boolean array broadcastable to the scores' shape (..., L, S). True means "this query
may attend to this key"; False means it may not (the convention of PyTorch's
`scaled_dot_product_attention`, the opposite of `nn.MultiheadAttention`'s boolean mask). A query
whose keys are all masked gets all-zero weights and a zero output, never NaN.

You may reuse your softmax: `from .softmax import softmax` (a relative import).
"""

import numpy as np
import torch
from torch import nn

from .softmax import softmax


def scaled_dot_product_attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, with an optional boolean mask.

    Steps: scores = Q K^T / sqrt(d_k), where K^T swaps only the last two axes of K (the batch
    axes stay put); masked scores become -inf; weights = softmax(scores) over the key axis
    (the last one); output = weights @ V. A fully masked query row gets zero weights and a zero
    output.

    Shape:
        Q: (..., L, d_k)    K: (..., S, d_k)    V: (..., S, d_v)
        mask: None, or bool broadcastable to (..., L, S); True = the query may attend the key.
        returns: (output (..., L, d_v), weights (..., L, S)); the leading axes broadcast.

    Dtypes:
        float32 inputs give float32 results, float64 give float64; integers give float64.

    Raises:
        ValueError: a sentence naming both shapes, when Q and K widths (last axes) differ, or
            when K and V lengths (second-to-last axes) differ.

    Source:
        Vaswani et al. 2017, section 3.2.1, equation (1); the PyTorch documentation page
        "torch.nn.functional.scaled_dot_product_attention" (same mask convention).
    """
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last dimension, got Q {Q.shape} and K {K.shape}.")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same length, got K {K.shape} and V {V.shape}.")
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / d_k ** 0.5
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def self_attention(
    X: np.ndarray,
    W_q: np.ndarray,
    W_k: np.ndarray,
    W_v: np.ndarray,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention of the tokens X: Q = X W_q, K = X W_k, V = X W_v, then attention.

    Returns `scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask)`.

    Shape:
        X: (..., L, d_model)   W_q: (d_model, d_k)   W_k: (d_model, d_k)   W_v: (d_model, d_v)
        mask: None, or bool broadcastable to (..., L, L); True = the query may attend the key.
        returns: (output (..., L, d_v), weights (..., L, L)).

    Dtypes and errors: as `scaled_dot_product_attention` (ValueError when W_q and W_k give
    different widths).

    Source: Vaswani et al. 2017, section 3.2.1; the class notebook's NumPy walkthrough.
    """
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask)


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) = (a . b) / (|a| |b|), as a Python float in [-1, 1].

    Shape:
        a: (n,)   b: (n,)   returns: a Python `float`.

    Raises:
        ValueError: when a or b is not 1-D, when their lengths differ, or when either is the
            zero vector (its direction, hence the cosine, is undefined).

    Source: the class notebook's `cosine` helper; "torch.nn.functional.cosine_similarity".
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or len(a) != len(b):
        raise ValueError(f"Need two 1-D vectors with the same length, got {a.shape} and {b.shape}.")
    if np.linalg.norm(a) == 0 or np.linalg.norm(b) == 0:
        raise ValueError("The cosine similarity of a zero vector is undefined.")
    return float(np.clip(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), -1, 1))


class SelfAttention(nn.Module):
    """Single-head self-attention with learned projections, as in the class notebook.

    forward(x) computes Q = W_q(x), K = W_k(x), V = W_v(x) (no bias), then
    softmax(Q K^T / sqrt(d_k)) V over the key axis, with masked keys weighted 0.

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
        if d_k is None:
            d_k = d_model
        if d_v is None:
            d_v = d_model
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (L, d_model) or (B, L, d_model), mask None or bool broadcastable to (..., L, L)
        (True = may attend) -> (output (..., L, d_v), weights (..., L, L))."""
        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = torch.nan_to_num(weights)  # rows with every key masked
        return weights @ V, weights
