"""Multi-head attention mistakes that come together, named together.

A score scale, a mask laid out on the wrong axis, and fully masked queries not given zero
weights, in every combination (a tutorial scaling by sqrt(d_model), filling masked scores with
-1e20 and using a (B, L, S) mask as it is, has all three):
- each combination is the contract's computation with the same weights
  (support.divergence.trace), the queries' weights rescaled for the scale and the mask laid out
  as the mistake lays it; the learner's result is named with every mistake of the combination
  it matches;
- fully masked queries are judged by what can be observed, not by one fill value: their weights
  rows are NaN or sum to 1 (any finite fill, an additive mask), every other row matching.

Symbols: B batch, L queries, S keys, d_model width, h heads, d_k = d_model // h.
Design: docs/internals/notebook-mistakes.md#mistakes-that-come-together.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import numpy as np
import torch

from autograder.expected import expected_value
from autograder.feedback import Satisfies
from tests.graders.support.catalogue import mistake
from tests.graders.support.divergence import trace

NO_SCALE = "multi_head_attention/no-scale"
SCALE_BY_D_MODEL = "multi_head_attention/scale-by-d-model"
MASK_NO_HEAD_AXIS = "multi_head_attention/mask-no-head-axis"
MASK_HEAD_AXIS_ALWAYS = "multi_head_attention/mask-head-axis-always"
FULLY_MASKED_QUERY = "multi_head_attention/fully-masked-query"
ROW_ATOL = 1e-5


def combined_mistakes(state, heads: int, query, key, value, mask) -> tuple[dict, dict]:
    """({sentences: output or Satisfies}, {sentences: weights or Satisfies}) for every
    combination of a scale, a mask layout and blank-row handling that is not all right, from
    support.divergence.trace (the contract's computation, fully masked queries zero)."""
    outputs: dict[str, object] = {}
    weights: dict[str, object] = {}
    for ids, out, w, blank in _combinations(state, heads, query, key, value, mask):
        if ids:
            sentence = _sentences(ids)
            outputs[sentence], weights[sentence] = out, w
        if blank is not None:
            sentence = _sentences([*ids, FULLY_MASKED_QUERY])
            outputs[sentence] = Satisfies(_rows_match(out, blank.any(dim=1)))
            weights[sentence] = Satisfies(_normalised_blank_rows(w, blank))
    return outputs, weights


@expected_value
def _combinations(state, heads: int, query, key, value, mask) -> list:
    """[(mistake ids, output (B, L, d_model), weights (B, h, L, S), fully masked queries
    (B, h, L) or None)] for each scale and mask layout, the right ones first."""
    d_model = state["W_q.weight"].shape[0]
    d_k = d_model // heads
    scales = {None: 1.0, NO_SCALE: math.sqrt(d_k)}
    if heads > 1:
        scales[SCALE_BY_D_MODEL] = math.sqrt(d_k / d_model)
    layouts = {None: mask, **_wrong_layouts(mask, heads, query.shape[0], query.shape[1])}
    found = []
    for (scale_id, factor), (layout_id, used) in itertools.product(scales.items(), layouts.items()):
        scaled = {k: v * factor if k.startswith("W_q.") else v for k, v in state.items()}
        steps = trace(scaled, heads, query, key, value, used)
        ids = [i for i in (scale_id, layout_id) if i]
        found.append((ids, steps.output, steps.weights, _blank_queries(used, steps.weights.shape)))
    return found


def _sentences(ids: list[str]) -> str:
    return " ".join(mistake(i) for i in ids)


def _wrong_layouts(mask, heads: int, batch: int, length: int) -> dict[str, torch.Tensor]:
    """The masks (B, h, L, S) a mistaken layout applies, where it still broadcasts: a (B, L, S)
    mask used as it is lines up with the heads when B == h; an (L, S) mask given a head axis,
    (L, 1, S), lines up its rows with the heads when L == h."""
    if mask is None or heads < 2:
        return {}
    m = torch.as_tensor(mask).bool()
    found = {}
    if m.dim() == 3 and m.shape[0] == heads and batch > 1:
        found[MASK_NO_HEAD_AXIS] = m.unsqueeze(0).expand(batch, *m.shape)
    if m.dim() == 2 and m.shape[0] == heads == length:
        found[MASK_HEAD_AXIS_ALWAYS] = m.unsqueeze(1).expand(batch, heads, length, m.shape[1])
    return found


def _blank_queries(mask, shape) -> torch.Tensor | None:
    """(B, h, L) True where a query may attend to no key, or None when there is none."""
    if mask is None:
        return None
    m = torch.as_tensor(mask).bool()
    m = m.unsqueeze(1) if m.dim() == 3 else m
    blank = ~m.expand(*shape).any(dim=-1)
    return blank if bool(blank.any()) else None


def _rows_match(expected: torch.Tensor, blank: torch.Tensor):
    """A test of an output (B, L, d_model): equal to `expected` on every query that has a key
    (blank (B, L) False), anything on the others."""

    def test(have: np.ndarray) -> bool:
        have_t = torch.as_tensor(have, dtype=torch.float64)
        if tuple(have_t.shape) != tuple(expected.shape):
            return False
        keep = ~blank
        diff = (have_t - expected.to(torch.float64)).abs()[keep]
        return bool((diff <= ROW_ATOL).all()) and not _close(have_t[~keep], expected[~keep])

    return test


def _normalised_blank_rows(expected: torch.Tensor, blank: torch.Tensor):
    """A test of weights (B, h, L, S): equal to `expected` on every query that has a key, NaN or
    a row summing to 1 on the others (a softmax of an all -inf row, or of a finite fill)."""

    def test(have: np.ndarray) -> bool:
        have_t = torch.as_tensor(have, dtype=torch.float64)
        if tuple(have_t.shape) != tuple(expected.shape):
            return False
        rows = have_t[blank]  # (n, S)
        normalised = torch.isnan(rows).all(dim=-1) | ((rows.sum(dim=-1) - 1).abs() <= 1e-4)
        diff = (have_t - expected.to(torch.float64)).abs()[~blank]
        return bool(normalised.all()) and bool((diff <= ROW_ATOL).all())

    return test


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(torch.allclose(a.to(torch.float64), b.to(torch.float64), atol=ROW_ATOL))


def mask_shape_mistake(mask, heads: int, batch: int) -> Mapping[str, Satisfies]:
    """{MASK_HEAD_AXIS_ALWAYS: weights of shape (B, B, h, L, S)}: a 4-D mask given one more
    head axis, (B, 1, h, L, S), broadcasts the scores to 5-D."""
    if mask is None or torch.as_tensor(mask).dim() != 4:
        return {}
    L, S = torch.as_tensor(mask).shape[-2:]
    shape = (batch, batch, heads, L, S)
    return {mistake(MASK_HEAD_AXIS_ALWAYS): Satisfies(lambda have: have.shape == shape)}
