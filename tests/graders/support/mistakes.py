"""Expected values from torch built-ins, and what the common mistakes would produce instead.

These ship with the visible graders, so they are built only from torch built-ins
(`torch.softmax`, `F.scaled_dot_product_attention`, `F.layer_norm`, `F.linear`,
`nn.MultiheadAttention` through support.torch_equivalents), never from a reference solution. A
test hands the mistake arrays to `expect_close(..., mistakes={sentence: array})`, which names the
mistake when the learner's result matches one of them.

All arrays here are float64 numpy unless a function says otherwise.
Symbols: B batch, L query length, S key/value length, d_k query/key width, d_v value width,
d_model model width, h heads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F

from autograder.feedback import GradingFailure
from autograder.runtime.errors import LearnerError

# Learner-facing sentences, reused by the tests (each names the mistake and the fix).
NO_SCALE = "your scores are not scaled: divide Q K^T by sqrt(d_k) before the softmax"
SCALE_BY_D_K = "you divided the scores by d_k; divide them by sqrt(d_k)"
SCALE_BY_D_V = (
    "you scaled the scores by sqrt(d_v), the width of V; the scale is 1/sqrt(d_k), the width "
    "of Q and K"
)
SCALE_BY_D_MODEL = (
    "you scaled the scores by sqrt(d_model); the scale is 1/sqrt(d_k), the width of the "
    "projected queries and keys (d_model // num_heads per head)"
)
SOFTMAX_OVER_QUERIES = (
    "your weights are normalised over the query axis (-2); each query's row must sum to 1 over "
    "the key axis (-1)"
)
K_ALL_AXES_TRANSPOSED = (
    "you transposed all axes of K (K.T); swap only the last two (np.swapaxes(K, -1, -2)) so "
    "that batched inputs keep their batch axes"
)
MASK_INVERTED = (
    "your mask is inverted: True means the query MAY attend to that key, False means it may not"
)
BATCHED_MATMUL_FAILED = "with batched inputs, if you wrote K.T: " + K_ALL_AXES_TRANSPOSED


@contextmanager
def hint_on_error(hint: str, *, when: str = "") -> Iterator[None]:
    """Add `hint` to the sentence of an exception the learner's code raises inside the block
    (only when its message contains `when`); any other LearnerError passes through unchanged."""
    try:
        yield
    except LearnerError as error:
        if error.kind != "exception" or when not in error.message:
            raise
        raise GradingFailure(f"{error.feedback.rstrip('.')}. Hint: {hint}.") from None


def softmax_over(x: np.ndarray, axis: int) -> np.ndarray:
    """torch.softmax of `x` along `axis`, in float64 (a slice that is all -inf gives zeros)."""
    t = torch.as_tensor(np.asarray(x, dtype=np.float64))
    out = torch.softmax(t, dim=axis)
    return torch.nan_to_num(out, nan=0.0).numpy()


def axis_mistakes(x: np.ndarray, axis: int) -> dict[str, np.ndarray]:
    """What softmax(x, axis) would give if it normalised over each other axis of x instead."""
    wanted = axis % x.ndim
    return {
        f"your softmax normalises over axis {other}; expected axis={axis}": softmax_over(x, other)
        for other in range(x.ndim)
        if other != wanted
    }


def sdpa(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Attention by F.scaled_dot_product_attention: (output (..., L, d_v), weights (..., L, S)).

    `scale` defaults to 1/sqrt(d_k). The weights come from the same built-in with V replaced by
    the identity (weights @ I = weights). Fully masked query rows are zeros (the contract).
    """
    q, k, v = (torch.as_tensor(np.asarray(a, dtype=np.float64)) for a in (Q, K, V))
    m = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))
    S = k.shape[-2]
    eye = torch.eye(S, dtype=torch.float64).expand(*k.shape[:-1], S)  # (..., S, S)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=scale)
    weights = F.scaled_dot_product_attention(q, k, eye, attn_mask=m, scale=scale)
    if m is not None:
        blank = ~m.any(dim=-1, keepdim=True)  # (..., L, 1): queries with no key at all
        out, weights = out.masked_fill(blank, 0.0), weights.masked_fill(blank, 0.0)
    return torch.nan_to_num(out).numpy(), torch.nan_to_num(weights).numpy()


Mistakes = tuple[dict[str, object], dict[str, object]]


def split_pairs(found: Mapping[str, tuple]) -> Mistakes:
    """{sentence: (output, weights)} -> ({sentence: output}, {sentence: weights})."""
    return (
        {sentence: pair[0] for sentence, pair in found.items()},
        {sentence: pair[1] for sentence, pair in found.items()},
    )


def sdpa_mistakes(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    d_model: int | None = None,
) -> Mistakes:
    """({sentence: output}, {sentence: weights}) that each attention mistake would give.

    d_model: for self_attention, the input width X.shape[-1] (adds the sqrt(d_model) mistake).
    Only mistakes that give a result of the right shape and a different value are included.
    """
    d_k, d_v = Q.shape[-1], V.shape[-1]
    found = {
        NO_SCALE: sdpa(Q, K, V, mask, scale=1.0),
        SCALE_BY_D_K: sdpa(Q, K, V, mask, scale=1.0 / d_k),
        SOFTMAX_OVER_QUERIES: _softmax_over_queries(Q, K, V, mask),
    }
    if d_v != d_k:
        found[SCALE_BY_D_V] = sdpa(Q, K, V, mask, scale=d_v**-0.5)
    if d_model is not None and d_model != d_k:
        found[SCALE_BY_D_MODEL] = sdpa(Q, K, V, mask, scale=d_model**-0.5)
    if mask is not None:
        found[MASK_INVERTED] = sdpa(Q, K, V, ~np.asarray(mask, dtype=bool))
    KT = np.swapaxes(np.asarray(K).T, -1, -2)  # the keys that Q @ K.T really uses
    if Q.ndim > 2 and KT.shape == np.shape(K):
        found[K_ALL_AXES_TRANSPOSED] = sdpa(Q, KT, V, mask)
    return split_pairs(found)


def _softmax_over_queries(Q, K, V, mask):
    """Weights normalised over the queries: the built-in with the roles of Q and K swapped gives
    (..., S, L) rows normalised over the queries; their transpose is the mistake's weights."""
    swapped_mask = None if mask is None else np.swapaxes(mask, -1, -2)
    _, weights_t = sdpa(K, Q, np.zeros((*Q.shape[:-1], 1)), swapped_mask, scale=Q.shape[-1] ** -0.5)
    weights = np.swapaxes(weights_t, -1, -2)  # (..., L, S)
    return weights @ V, weights
