"""Multi-head attention that packs query, key and value into one tensor: what a per-head split
of the packed projection gives, and the hint for the error a packing raises in cross-attention.

A packed projection [Q | K | V] (B, T, 3 * d_model), reshaped to (B, T, h, 3 * d_k) and chunked
into q, k, v (a tutorial's fused qkv_proj), gives head i the features 3*i*d_k:3*(i+1)*d_k of the
packed tensor instead of rows i*d_k:(i+1)*d_k of each of W_q, W_k, W_v. Packing needs the three
inputs to have the same length; in cross-attention (L != S) torch.cat or torch.stack refuses.
Symbols: B batch, L queries, S keys, T tokens, d_model width, h heads, d_k = d_model // h.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from autograder.expected import expected_value
from autograder.feedback import Satisfies
from tests.graders.support.catalogue import mistake
from tests.graders.support.divergence import (
    _allowed,
    _merge,
    _project,
    _softmax,
    _state64,
    packed_heads,
)
from tests.graders.support.hints import hint_on_error
from tests.graders.support.mha_combined import _normalised_blank_rows, _rows_match

QKV_SPLIT_PER_HEAD = "multi_head_attention/qkv-split-per-head"
PACKED_CROSS_ATTENTION = "multi_head_attention/packed-cross-attention"
FULLY_MASKED_QUERY = "multi_head_attention/fully-masked-query"


@expected_value
def _split_per_head(state, heads: int, query, key, value, mask) -> tuple | None:
    """(output (B, L, d_model), weights (B, h, L, S), fully masked queries (B, h, L) or None)
    of a per-head split of the packed projection, fully masked queries given zero weights."""
    found = packed_heads(state, heads, query, key, value)
    if found is None:
        return None
    q, k, v = found
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    allowed = _allowed(mask, scores.shape)
    weights = _softmax(scores, allowed)
    output = _project(_merge(weights @ v), _state64(state), "W_o")
    blank = ~allowed.any(dim=-1)
    return output, weights, blank if bool(blank.any()) else None


def packed_mistakes(state, heads: int, query, key, value, mask) -> tuple[dict, dict]:
    """({sentence: output}, {sentence: weights}) of a per-head split of the packed projection,
    alone and, where some query is fully masked, with such queries not given zero weights;
    ({}, {}) when the inputs cannot show it."""
    found = _split_per_head(state, heads, query, key, value, mask)
    if found is None:
        return {}, {}
    output, weights, blank = found
    sentence = mistake(QKV_SPLIT_PER_HEAD)
    outputs, all_weights = {sentence: output}, {sentence: weights}
    if blank is not None:
        both = f"{sentence} {mistake(FULLY_MASKED_QUERY)}"
        outputs[both] = Satisfies(_rows_match(output, blank.any(dim=1)))
        all_weights[both] = Satisfies(_normalised_blank_rows(weights, blank))
    return outputs, all_weights


def _packing_failed(length: int, other: int):
    """hint_on_error's `when`: torch.cat or torch.stack refusing tensors of `length` and
    `other` tokens ("Expected size 3 but got size 6", "stack expects each tensor to be equal
    size, but got [2, 3, 16] ... and [2, 6, 16]")."""
    sizes = {(length, other), (other, length)}

    def matches(message: str) -> bool:
        if "Sizes of tensors must match except in dimension" in message:
            return any(f"Expected size {a} but got size {b}" in message for a, b in sizes)
        if "stack expects each tensor to be equal size" in message:
            return f", {length}, " in message and f", {other}, " in message
        return False

    return matches


@contextmanager
def packing_hint(query, key) -> Iterator[None]:
    """Name the packing of query, key and value when the learner's cross-attention call fails
    in torch.cat or torch.stack on the query's and the key's lengths."""
    L, S = query.shape[-2], key.shape[-2]
    if L == S:
        yield
        return
    with hint_on_error(mistake(PACKED_CROSS_ATTENTION), when=_packing_failed(L, S)):
        yield
