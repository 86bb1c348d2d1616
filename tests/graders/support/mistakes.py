"""Attention: expected values from torch built-ins, and what each known mistake gives instead.

These ship with the visible graders, so they are built only from torch built-ins
(`torch.softmax`, `F.scaled_dot_product_attention`) and the mistakes' own definitions, never
from a reference solution, and they run in the trusted harness only. A test hands the mistake
arrays to `expect_close(..., mistakes={sentence: array})`, which names the mistake when the
learner's result matches one of them. Every sentence comes from the course's catalogue
(mistakes/attention.toml, mistakes/softmax.toml): `[<id>] explanation. Read: course notes, ...`.

All arrays here are float64 numpy unless a function says otherwise.
Functions marked @expected_value are computed once per distinct arguments
(autograder/expected.py), so they stay pure functions of their arguments: no global random draws.
Symbols: B batch, L query length, S key/value length, d_k query/key width, d_v value width,
d_model model width, h heads.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F

from autograder.expected import expected_value
from autograder.feedback import Lazy, Satisfies
from tests.graders.support.blank_rows import normalised_rows, rows_match
from tests.graders.support.catalogue import mistake
from tests.graders.support.hints import hint_on_error
from tests.graders.support.sdpa_combined import combined_mistakes, wrong_scales
from tests.graders.support.softmax_mistakes import NAN_ALL_INF, axis_mistakes, softmax_over

__all__ = [  # softmax_over and axis_mistakes moved to softmax_mistakes; still importable here
    "BATCHED_MATMUL_FAILED",
    "BLANK_ROW_UNIFORM",
    "K_ALL_AXES_TRANSPOSED",
    "K_FIXED_AXES",
    "MASK_IGNORED",
    "NO_SHAPE_CHECK",
    "MASK_AFTER_SOFTMAX",
    "MASK_FILL_SMALL_NEGATIVE",
    "MASK_FILL_ZERO",
    "MASK_INVERTED",
    "NO_SCALE",
    "PADDING_OVER_QUERIES",
    "FLOAT32_SCALE",
    "SCALE_BY_D_K",
    "SCALE_BY_D_MODEL",
    "SCALE_BY_D_V",
    "SCALE_BY_KEY_LENGTH",
    "SMALL_NEGATIVE_FILL",
    "SOFTMAX_OVER_QUERIES",
    "MASK_BROADCAST_FAILED",
    "Mistakes",
    "attention_call_hints",
    "axis_mistakes",
    "masked_attention",
    "hint_on_error",
    "self_attention_hints",
    "sdpa",
    "sdpa_mistakes",
    "softmax_over",
    "split_pairs",
]

# Learner-facing sentences (the catalogue's), reused by the tests and by mha_mistakes.
NO_SCALE = mistake("attention/no-scale")
SCALE_BY_D_K = mistake("attention/scale-by-d-k")
SCALE_BY_D_V = mistake("attention/scale-by-d-v")
SCALE_BY_D_MODEL = mistake("attention/scale-by-d-model")
SCALE_BY_KEY_LENGTH = mistake("attention/scale-by-key-length")
FLOAT32_SCALE = mistake("attention/float32-inside")
SOFTMAX_OVER_QUERIES = mistake("attention/softmax-over-queries")
K_ALL_AXES_TRANSPOSED = mistake("attention/k-transposed-all-axes")
MASK_FILL_ZERO = mistake("attention/mask-fill-zero")
MASK_FILL_SMALL_NEGATIVE = mistake("attention/mask-fill-small-negative")
BLANK_ROW_UNIFORM = mistake("attention/blank-row-uniform")
MASK_AFTER_SOFTMAX = mistake("attention/mask-after-softmax")
MASK_INVERTED = mistake("attention/mask-inverted")
PADDING_OVER_QUERIES = mistake("attention/padding-over-queries")
K_FIXED_AXES = mistake("attention/k-transpose-fixed-axes")
MASK_IGNORED = mistake("attention/mask-ignored")
NO_SHAPE_CHECK = mistake("attention/no-shape-check")
BATCHED_MATMUL_FAILED = "with batched inputs, if you wrote K.T: " + K_ALL_AXES_TRANSPOSED
MASK_BROADCAST_FAILED = (
    "the mask has one row per query and one column per key, and broadcasts against the scores "
    "(..., L, S) as it is; if you transposed or reshaped it: " + PADDING_OVER_QUERIES
)

# NaN on fully masked rows in a torch module: torch.softmax of an all -inf row is NaN (H44: the
# NumPy softmax's sentence, with its np.where fix, was shown for a torch SelfAttention).
NAN_ROWS_TORCH = (
    "A query whose every key is masked gets NaN weights: torch.softmax of a row that is all "
    "-inf is NaN. Such a query must get all-zero weights and a zero output: after the softmax, "
    "set its row to 0, e.g. weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)."
)

# The small negative the mask-fill-small-negative mistake is recognised by (-1 is what learners
# write; a fill of -100 or below changes no weight beyond 1e-40 except on fully masked rows,
# which BLANK_ROW_UNIFORM names).
SMALL_NEGATIVE_FILL = -1.0


@contextmanager
def attention_call_hints(mask: object = None) -> Iterator[None]:
    """hint_on_error for a call of the learner's attention: K.T on batched inputs (a matmul
    error), K transposed with fixed axes on another number of axes (NumPy's "axes don't match
    array") and, when there is a mask, a transposed or reshaped mask (a broadcast error)."""
    with (
        hint_on_error(BATCHED_MATMUL_FAILED, when="matmul"),
        hint_on_error(K_FIXED_AXES, when="axes don't match array"),
    ):
        if mask is None:
            yield
        else:
            with hint_on_error(MASK_BROADCAST_FAILED, when=_transposed_mask(mask)):
                yield


@contextmanager
def self_attention_hints(x: object, d_k: int) -> Iterator[None]:
    """hint_on_error for a call of the learner's SelfAttention module on x: K.T of a batched
    (B, L, d_k) tensor reverses every axis, and its matmul meets B with d_k ("The size of tensor
    a (B) must match the size of tensor b (d_k)"); a fixed keys.transpose(1, 2) fails on an
    unbatched (L, d_model) x ("Dimension out of range")."""
    shape = tuple(getattr(x, "shape", ()))
    if len(shape) == 3 and shape[0] != d_k:
        when: tuple[str, ...] = ("must match", f"({shape[0]})", f"({d_k})")
        with hint_on_error(K_ALL_AXES_TRANSPOSED, when=when):
            yield
    elif len(shape) == 2:
        with hint_on_error(K_FIXED_AXES, when="Dimension out of range"):
            yield
    else:
        yield


def _transposed_mask(mask: object) -> Callable[[str], bool]:
    """Whether a message is NumPy's broadcast error naming `mask` with its last two axes
    swapped (np.swapaxes, or .T of a 2-D mask) or all of them reversed (.T): "operands could
    not be broadcast together with shapes (7,4) (3,4,7)". "broadcast" alone also caught a
    softmax sum without keepdims, or np.dot on batches (H44)."""
    shape = np.shape(mask)
    if len(shape) < 2:
        return lambda message: False
    # A square mask transposed still broadcasts: its own shape in a message says nothing.
    shapes = {(*shape[:-2], shape[-1], shape[-2]), tuple(reversed(shape))} - {tuple(shape)}
    texts = ["(" + ",".join(str(n) for n in s) + ")" for s in shapes]
    return lambda message: "broadcast" in message and any(t in message for t in texts)


@expected_value
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


Mistakes = tuple[Mapping[str, object], Mapping[str, object]]


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
    got: object = None,
    torch_softmax: bool = False,
) -> Mistakes:
    """({sentence: output}, {sentence: weights}) that each attention mistake would give.

    d_model: the width of the tokens the queries and keys were projected from (self_attention's
    X.shape[-1], SelfAttention's d_model); adds the sqrt(d_model) mistake.
    got: the learner's (output, weights), when there is one: a small negative fill is then
    recognised whatever its value (fitted to the learner's weights), not only -1.
    Only mistakes that give a result of the right shape (and, mostly, a different value) are
    included; the masking mistakes only when there is a mask.
    torch_softmax: the learner's code is a torch module (SelfAttention), whose softmax is
    torch's: NaN rows are then named with NAN_ROWS_TORCH, not the NumPy softmax's mistake.
    Both are feedback.Lazy mappings, computed (together) only when one is read: expect_close
    reads them only when the learner's result is wrong.
    """
    found = Lazy.pair(lambda: _with_fitted_fill(Q, K, V, mask, d_model=d_model, got=got))
    if not torch_softmax:
        return found
    return Lazy.pair(lambda: tuple(_torch_nan(m) for m in found))


def _torch_nan(mistakes: Mapping[str, object]) -> dict[str, object]:
    return {NAN_ROWS_TORCH if k == NAN_ALL_INF else k: v for k, v in mistakes.items()}


def _with_fitted_fill(Q, K, V, mask, *, d_model: int | None, got: object) -> Mistakes:
    """sdpa_mistakes, computed: the cached ones, then the learner's own small negative fill."""
    outputs, weights = _sdpa_mistakes(Q, K, V, mask, d_model=d_model)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        fill = _fitted_fill(got, Q, K, mask)
        if fill is not None:  # the learner's own small negative, in place of -1 (same key order)
            pair = masked_attention(Q, K, V, mask, fill=fill)
            outputs[MASK_FILL_SMALL_NEGATIVE], weights[MASK_FILL_SMALL_NEGATIVE] = pair
        if not mask.any(axis=-1).all():  # any finite fill or additive mask, not only -1e9
            out, w = sdpa(Q, K, V, mask)
            blank = np.broadcast_to(~mask.any(axis=-1), w.shape[:-1])  # (..., L)
            outputs[BLANK_ROW_UNIFORM] = Satisfies(rows_match(out, blank))
            weights[BLANK_ROW_UNIFORM] = Satisfies(normalised_rows(w, blank))
    return outputs, weights


@expected_value
def _sdpa_mistakes(Q, K, V, mask=None, *, d_model: int | None = None) -> Mistakes:
    """sdpa_mistakes with the small negative fill at -1: the same for every learner, so computed
    once (the fill fitted to a learner's weights is theirs alone)."""
    found = {
        sentence: sdpa(Q, K, V, mask, scale=scale)
        for sentence, scale in wrong_scales(Q, K, V, d_model).items()
    }
    found[SOFTMAX_OVER_QUERIES] = _softmax_over_queries(Q, K, V, mask)
    if mask is not None:
        found.update(_mask_mistakes(Q, K, V, np.asarray(mask, dtype=bool)))
    KT = np.swapaxes(np.asarray(K).T, -1, -2)  # the keys that Q @ K.T really uses
    if Q.ndim > 2 and KT.shape == np.shape(K):
        found[K_ALL_AXES_TRANSPOSED] = sdpa(Q, KT, V, mask)
    found.update(combined_mistakes(Q, K, V, mask, d_model=d_model))  # after each alone
    return split_pairs(found)


def _mask_mistakes(Q, K, V, mask: np.ndarray) -> dict[str, tuple]:
    """The masking mistakes: masked scores filled with 0 or a small negative, the mask applied
    after the softmax, inverted, or (a padding mask) transposed onto the queries; and, when a
    query has no key at all, a finite fill (equal weights) or a softmax that gives NaN."""
    found = {MASK_IGNORED: sdpa(Q, K, V)}
    if not mask.any(axis=-1).all():  # some query may attend to no key
        # First: a fill so negative that only the fully masked rows show it is this mistake.
        found[BLANK_ROW_UNIFORM] = masked_attention(Q, K, V, mask, fill=-1e9)
        found[NAN_ALL_INF] = masked_attention(Q, K, V, mask, fill=-np.inf)
    found[MASK_FILL_ZERO] = masked_attention(Q, K, V, mask, fill=0.0)
    found[MASK_FILL_SMALL_NEGATIVE] = masked_attention(Q, K, V, mask, fill=SMALL_NEGATIVE_FILL)
    found[MASK_AFTER_SOFTMAX] = masked_attention(Q, K, V, mask, after=True)
    found[MASK_INVERTED] = sdpa(Q, K, V, ~mask)
    L, S = Q.shape[-2], K.shape[-2]
    if mask.ndim >= 2 and mask.shape[-2] == 1 and L == S > 1:  # a padding mask (..., 1, S)
        found[PADDING_OVER_QUERIES] = sdpa(Q, K, V, np.swapaxes(mask, -1, -2))
    elif mask.ndim >= 2 and mask.shape[-2] == mask.shape[-1] == L == S > 1:  # square: transposed
        transposed = np.swapaxes(mask, -1, -2)
        if not np.array_equal(transposed, mask):
            found[PADDING_OVER_QUERIES] = sdpa(Q, K, V, transposed)
    return found


def _fitted_fill(got: object, Q, K, mask: np.ndarray) -> float | None:
    """The score c that masked keys would need to get the learner's weights, if they were
    softmax(where(mask, Q K^T / sqrt(d_k), c)): in a row, weight = exp(score - Z), so
    c = log(masked weight) + Z, with Z = score - log(weight) of any allowed key. The median
    over every row that has both kinds of keys; None when there is none, or c is not a small
    negative (-60 < c < 0: 0 is mask-fill-zero, below -60 the weights are all but -inf's)."""
    try:
        weights = got[1]
        if hasattr(weights, "detach"):
            weights = weights.detach().double().numpy()
        weights = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError, IndexError):
        return None
    q, k = np.asarray(Q, dtype=np.float64), np.asarray(K, dtype=np.float64)
    scores = q @ np.swapaxes(k, -1, -2) / q.shape[-1] ** 0.5  # (..., L, S)
    shape = np.broadcast_shapes(scores.shape, mask.shape)
    if weights.shape != shape:
        return None
    scores, allowed = np.broadcast_to(scores, shape), np.broadcast_to(mask, shape)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: fully masked queries
        logs = np.log(weights)
        Z = np.nanmedian(np.where(allowed, scores - logs, np.nan), axis=-1, keepdims=True)
        c = np.where(~allowed, logs + Z, np.nan)
    c = c[np.isfinite(c)]
    if not c.size:
        return None
    c = float(np.median(c))
    return c if -60.0 < c < 0.0 else None


def masked_attention(Q, K, V, mask, *, fill: float = -np.inf, after: bool = False):
    """softmax(where(mask, Q K^T / sqrt(d_k), fill)) and its output, by torch.softmax (an all
    -inf row gives NaN, as it does); after=True: softmax of the unmasked scores, then the masked
    weights set to 0 (no renormalisation)."""
    q, k, v = (torch.as_tensor(np.asarray(a, dtype=np.float64)) for a in (Q, K, V))
    m = torch.as_tensor(mask)
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5  # (..., L, S)
    if after:
        weights = torch.where(m, torch.softmax(scores, dim=-1), 0.0)
    else:
        weights = torch.softmax(torch.where(m, scores, fill), dim=-1)
    return (weights @ v).numpy(), weights.numpy()


def _softmax_over_queries(Q, K, V, mask):
    """Weights normalised over the queries: the built-in with the roles of Q and K swapped gives
    (..., S, L) rows normalised over the queries; their transpose is the mistake's weights."""
    swapped_mask = None if mask is None else np.swapaxes(mask, -1, -2)
    _, weights_t = sdpa(K, Q, np.zeros((*Q.shape[:-1], 1)), swapped_mask, scale=Q.shape[-1] ** -0.5)
    weights = np.swapaxes(weights_t, -1, -2)  # (..., L, S)
    return weights @ V, weights
