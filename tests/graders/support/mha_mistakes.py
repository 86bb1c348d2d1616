"""What the common multi-head attention mistakes would produce, from torch built-ins only.

Expected values come from nn.MultiheadAttention loaded with a contract state dict (through
support.torch_equivalents), never from a reference solution. A test hands the mistake arrays to
`expect_close(..., mistakes={sentence: array})` (or support.mha_compare.expect_mha_pair), which
names the mistake when the learner's result matches one of them. Each sentence comes from the
course's catalogue (mistakes/multi_head_attention.toml). Symbols: B batch, L query length, S
key/value length, d_model model width, h heads, d_k = d_model // h.
Functions marked @expected_value are computed once per distinct arguments
(autograder/expected.py), so they stay pure functions of their arguments: no global random draws.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F

from autograder.expected import expected_value
from autograder.feedback import Lazy, Satisfies
from tests.graders.support.catalogue import mistake
from tests.graders.support.mha_combined import combined_mistakes, mask_shape_mistake
from tests.graders.support.mha_packed import packed_mistakes
from tests.graders.support.mistakes import Mistakes, split_pairs
from tests.graders.support.torch_equivalents import torch_mha_forward, torch_mha_from

# Catalogue ids (mistakes/multi_head_attention.toml).
NO_SCALE = "multi_head_attention/no-scale"
SCALE_BY_D_MODEL = "multi_head_attention/scale-by-d-model"
MASK_INVERTED = "multi_head_attention/mask-inverted"
SPLIT_WITHOUT_TRANSPOSE = "multi_head_attention/split-without-transpose"
MERGE_WITHOUT_TRANSPOSE = "multi_head_attention/merge-without-transpose"
KV_FROM_QUERY = "multi_head_attention/kv-from-query"
NO_OUTPUT_PROJECTION = "multi_head_attention/no-output-projection"
AVERAGED_WEIGHTS = "multi_head_attention/averaged-weights"
DROPOUT_IN_EVAL = "multi_head_attention/dropout-in-eval"
HEADS_FIRST = "multi_head_attention/heads-first"

# A hint for an exception in cross-attention (L != S) with a mask (B, L, S): scores built from
# the L queries alone are (B, h, L, L) and do not meet the mask.
KV_FROM_QUERY_FAILED = (
    "in cross-attention the queries have L tokens and the keys and values S, so the scores are "
    "(B, h, L, S); if your keys or values came from the query: " + mistake(KV_FROM_QUERY)
)


def kv_from_query_sizes(L: int, S: int) -> tuple[str, ...]:
    """hint_on_error's `when` for KV_FROM_QUERY_FAILED: scores (B, h, L, L) meeting a mask
    (B, L, S) fail with PyTorch's "The size of tensor a (L) must match the size of tensor b
    (S)" (or b then a); "size" alone also caught a .view of a transposed tensor (H44)."""
    return ("size", f"({L})", f"({S})")


@expected_value
def mha(
    state: Mapping[str, torch.Tensor],
    num_heads: int,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """nn.MultiheadAttention loaded with a contract state dict, called the contract's way:
    (output (B, L, d_model), weights (B, h, L, S)); mask True = may attend."""
    d_model = state["W_q.weight"].shape[0]
    with torch.no_grad():
        built_in = torch_mha_from(state, d_model, num_heads)
        return torch_mha_forward(built_in, query, key, value, mask)


def output_from_weights(
    state: Mapping[str, torch.Tensor],
    num_heads: int,
    weights: torch.Tensor,
    value: torch.Tensor,
) -> torch.Tensor:
    """The output (B, L, d_model) that per-head `weights` (B, h, L, S) give with the values
    `value` (B, S, d_model): concat_heads(weights @ (value W_v)) W_o, as the contract computes
    it after any dropout of the weights."""
    B, S, d_model = value.shape
    d_k = d_model // num_heads
    with torch.no_grad():
        w = weights.detach().to(torch.float64)
        v = F.linear(value.double(), state["W_v.weight"].double(), _bias(state, "W_v"))
        heads = w @ v.view(B, S, num_heads, d_k).transpose(1, 2)  # (B, h, L, d_k)
        concat = heads.transpose(1, 2).reshape(B, w.shape[2], d_model)
        return F.linear(concat, state["W_o.weight"].double(), _bias(state, "W_o")).float()


def _bias(state: Mapping[str, torch.Tensor], name: str) -> torch.Tensor | None:
    bias = state.get(f"{name}.bias")
    return None if bias is None else bias.double()


def mha_mistakes(
    state: Mapping[str, torch.Tensor],
    num_heads: int,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> Mistakes:
    """({sentence: output}, {sentence: per-head weights}) that each MHA mistake would give, as
    two feedback.Lazy mappings computed (together, by _mha_mistakes) only when one is read:
    expect_close reads them only when the learner's result is wrong."""
    return Lazy.pair(lambda: _all_mistakes(state, num_heads, query, key, value, mask))


def _all_mistakes(state, num_heads, query, key, value, mask) -> Mistakes:
    """The combined mistakes (support.mha_combined) first, then the others, then a per-head
    split of a packed projection (support.mha_packed); every weights mistake also head-first."""
    outputs, weights = combined_mistakes(state, num_heads, query, key, value, mask)
    weights.update(mask_shape_mistake(mask, num_heads, query.shape[0]))
    more_outputs, more_weights = _mha_mistakes(state, num_heads, query, key, value, mask)
    packed_outputs, packed_weights = packed_mistakes(state, num_heads, query, key, value, mask)
    weights = {**weights, **more_weights, **packed_weights}
    expected = torch.nan_to_num(mha(state, num_heads, query, key, value, mask)[1])
    weights.update(heads_first(weights, expected))
    return {**outputs, **more_outputs, **packed_outputs}, weights


def heads_first(weights: Mapping[str, object], expected: torch.Tensor) -> dict[str, object]:
    """{sentence: weights (h, B, L, S)}: the expected weights and every weights mistake of
    `weights` (not an output mistake, whose weights are the expected ones), laid out
    head-first, each named with HEADS_FIRST as well."""
    sentence = mistake(HEADS_FIRST)
    found: dict[str, object] = {sentence: expected.transpose(0, 1)}
    for other, wrong in weights.items():
        if isinstance(wrong, Satisfies):
            found[f"{other} {sentence}"] = Satisfies(_swapped(wrong))
        elif isinstance(wrong, torch.Tensor) and wrong.dim() == 4 and not _same(wrong, expected):
            found[f"{other} {sentence}"] = wrong.transpose(0, 1)  # a weights mistake
    return found


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), atol=1e-6))


def _swapped(wrong: Satisfies):
    def test(have) -> bool:
        return have.ndim == 4 and wrong.holds(have.swapaxes(0, 1))

    return test


@expected_value
def _mha_mistakes(
    state: Mapping[str, torch.Tensor],
    num_heads: int,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> Mistakes:
    """mha_mistakes, computed: two dicts.

    A wrong score scale, a mask laid out on the wrong axis and fully masked queries not zeroed
    come from support.mha_combined, alone and together. No output projection is the built-in
    with W_o the
    identity. The head layout mistakes are in _layout_mistakes. Mistakes that give the right
    result on these inputs (one head, self-attention) are left out.
    """
    found = {}
    if mask is not None:
        found[MASK_INVERTED] = mha(state, num_heads, query, key, value, ~mask.bool())
    if num_heads > 1:
        found.update(_layout_mistakes(state, num_heads, query, key, value, mask))
    if _differs(key, query) or _differs(value, query):
        if mask is None or mask.shape[-1] == query.shape[1]:  # keys are now the L queries
            found[KV_FROM_QUERY] = mha(state, num_heads, query, query, query, mask)
    found[NO_OUTPUT_PROJECTION] = mha(_identity_output(state), num_heads, query, key, value, mask)
    output, weights = mha(state, num_heads, query, key, value, mask)
    found[AVERAGED_WEIGHTS] = (output, torch.nan_to_num(weights).mean(dim=1))
    found = {mistake(k): tuple(map(torch.nan_to_num, pair)) for k, pair in found.items()}
    return split_pairs(found)


def _differs(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape != b.shape or not torch.equal(a, b)


def _identity_output(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The state with W_o the identity (and its bias zero): its output is the concatenation."""
    out = dict(state)
    out["W_o.weight"] = torch.eye(state["W_o.weight"].shape[0], dtype=state["W_o.weight"].dtype)
    if "W_o.bias" in state:
        out["W_o.bias"] = torch.zeros_like(state["W_o.bias"])
    return out


def _layout_mistakes(state, heads, query, key, value, mask) -> dict[str, tuple]:
    """Heads split, or merged, with a plain reshape instead of a transpose.

    Both are the built-in's attention, with identity projections, on rearranged projections: the
    built-in's own split of `_as_plain_split(t)` is the plain reshape of t, and the plain
    reshape merge of its heads is `_as_plain_merge` of its (correctly merged) output.
    """

    def project(x, name):
        return F.linear(x, state[f"{name}.weight"], state.get(f"{name}.bias"))

    d_model = query.shape[-1]
    eye = torch.eye(d_model, dtype=state["W_q.weight"].dtype)
    identity = {f"W_{p}.weight": eye for p in "qkvo"}
    with torch.no_grad():
        Q, K, V = project(query, "W_q"), project(key, "W_k"), project(value, "W_v")
        split = mha(identity, heads, *(_as_plain_split(t, heads) for t in (Q, K, V)), mask)
        merged = mha(identity, heads, Q, K, V, mask)
        return {
            SPLIT_WITHOUT_TRANSPOSE: (project(torch.nan_to_num(split[0]), "W_o"), split[1]),
            MERGE_WITHOUT_TRANSPOSE: (
                project(_as_plain_merge(torch.nan_to_num(merged[0]), heads), "W_o"),
                merged[1],
            ),
        }


def _as_plain_split(t: torch.Tensor, heads: int) -> torch.Tensor:
    """(B, T, d_model) -> (B, T, d_model) whose .view(B, T, h, d_k).transpose(1, 2) equals
    t.reshape(B, h, T, d_k)."""
    B, T, d_model = t.shape
    return t.reshape(B, heads, T, d_model // heads).transpose(1, 2).reshape(B, T, d_model)


def _as_plain_merge(z: torch.Tensor, heads: int) -> torch.Tensor:
    """Undo a correct merge (B, L, d_model) back to heads (B, h, L, d_k), then merge them with a
    plain reshape."""
    B, L, d_model = z.shape
    return z.view(B, L, heads, d_model // heads).transpose(1, 2).reshape(B, L, d_model)


@expected_value
def dropout_in_eval(
    state: Mapping[str, torch.Tensor],
    num_heads: int,
    inputs: tuple,
    got_weights: object,
    p: float,
    atol: float,
) -> Mistakes:
    """({sentence: output}, {sentence: weights}) of attention dropout left on in eval mode, when
    the learner's weights (B, h, L, S) are the expected ones with every entry either dropped
    (0) or kept and scaled by 1/(1-p); ({}, {}) otherwise. Built from the learner's own keep
    pattern and nn.MultiheadAttention's weights, in the trusted process."""
    output, weights = mha(state, num_heads, *inputs)
    weights = torch.nan_to_num(weights)
    if not 0 < p < 1 or getattr(got_weights, "shape", None) != weights.shape:
        return {}, {}
    got = torch.as_tensor(got_weights).detach().to(weights.dtype)
    kept = weights / (1 - p)
    dropped = got.abs() <= atol
    if not bool(((got - kept).abs() <= atol).logical_or(dropped).all()) or not dropped.any():
        return {}, {}
    used = torch.where(dropped, torch.zeros_like(kept), kept)  # (B, h, L, S)
    query, key, value = inputs[:3]
    d_model = query.shape[-1]
    with torch.no_grad():
        V = F.linear(value, state["W_v.weight"], state.get("W_v.bias"))
        V = V.view(V.shape[0], V.shape[1], num_heads, d_model // num_heads).transpose(1, 2)
        concat = (used @ V).transpose(1, 2).reshape(query.shape[0], query.shape[1], d_model)
        output = F.linear(concat, state["W_o.weight"], state.get("W_o.bias"))
    sentence = mistake(DROPOUT_IN_EVAL)
    return {sentence: output}, {sentence: used}
