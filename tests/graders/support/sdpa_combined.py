"""Attention mistakes of the score scale, the softmax's axis and the mask, alone and together.

A tutorial written for tokens as columns, translated to rows, can scale by sqrt(S) and
normalise over the queries at once, and ignore the mask besides: every combination of a wrong
scale, the softmax over the query axis and the mask ignored is the built-in's computation with
that scale, axis and mask, named with each of its mistakes.

Two scale mistakes that give the same scale on a test's inputs (sqrt(S) and d_k when
S == d_k ** 2) are named together: the result cannot tell them apart. Symbols: L queries, S
keys, d_k query/key width, d_v value width, d_model model width. Arrays are float64 numpy.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch

from tests.graders.support.catalogue import mistake

NO_SCALE = "attention/no-scale"
SCALE_BY_D_K = "attention/scale-by-d-k"
SCALE_BY_D_V = "attention/scale-by-d-v"
SCALE_BY_D_MODEL = "attention/scale-by-d-model"
SCALE_BY_KEY_LENGTH = "attention/scale-by-key-length"
FLOAT32_SCALE = "attention/float32-inside"
SOFTMAX_OVER_QUERIES = "attention/softmax-over-queries"
MASK_IGNORED = "attention/mask-ignored"


def wrong_scales(Q, K, V, d_model: int | None = None) -> dict[str, float]:
    """{sentence: the scale of the scores} of each scale mistake that changes the scale on
    these inputs; mistakes with the same scale share one sentence that names each of them."""
    d_k, d_v, S = Q.shape[-1], V.shape[-1], K.shape[-2]
    candidates = [(NO_SCALE, 1.0), (SCALE_BY_D_K, 1.0 / d_k), (SCALE_BY_D_V, d_v**-0.5)]
    if d_model is not None:
        candidates.append((SCALE_BY_D_MODEL, d_model**-0.5))
    candidates.append((SCALE_BY_KEY_LENGTH, S**-0.5))
    candidates.append((FLOAT32_SCALE, 1.0 / float(np.sqrt(np.float32(d_k)))))
    right = d_k**-0.5
    grouped: dict[float, list[str]] = {}
    for slug, scale in candidates:
        if scale != right:
            key = next((s for s in grouped if math.isclose(s, scale, rel_tol=1e-12)), scale)
            grouped.setdefault(key, []).append(slug)
    return {_sentence(slugs): scale for scale, slugs in grouped.items()}


def combined_mistakes(Q, K, V, mask, *, d_model: int | None = None) -> dict[str, tuple]:
    """{sentence: (output, weights)} for every combination of two or three of: a wrong scale,
    the softmax over the query axis, the mask ignored (only when there is a mask)."""
    scales = {"": Q.shape[-1] ** -0.5, **wrong_scales(Q, K, V, d_model)}
    axes = {"": -1, mistake(SOFTMAX_OVER_QUERIES): -2}
    masks = {"": mask} if mask is None else {"": mask, mistake(MASK_IGNORED): None}
    found = {}
    for (s, scale), (a, axis), (m, used) in itertools.product(
        scales.items(), axes.items(), masks.items()
    ):
        named = [part for part in (s, a, m) if part]
        if len(named) >= 2:
            found[" ".join(named)] = attend(Q, K, V, used, scale=scale, axis=axis)
    return found


def attend(Q, K, V, mask, *, scale: float, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """(output, weights) of softmax(where(mask, Q K^T * scale, -inf), axis) V; entries a
    softmax leaves NaN (a query, or over the queries a key, with nothing allowed) are 0."""
    q, k, v = (torch.as_tensor(np.asarray(a, dtype=np.float64)) for a in (Q, K, V))
    scores = q @ k.transpose(-1, -2) * scale
    if mask is not None:
        scores = scores.masked_fill(~torch.as_tensor(np.asarray(mask, dtype=bool)), -math.inf)
    weights = torch.nan_to_num(torch.softmax(scores, dim=axis))
    return (weights @ v).numpy(), weights.numpy()


def _sentence(slugs: list[str]) -> str:
    return " ".join(mistake(slug) for slug in slugs)
