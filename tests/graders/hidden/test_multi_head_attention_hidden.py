"""Hidden graders for t101/multi_head_attention.py: other widths and head counts, per-batch
masks with fully masked rows, float64, gradients; compared with the reference and the built-in."""

from __future__ import annotations

import pytest
import torch

from autograder.feedback import expect_close, expect_dtype
from tests.graders.hidden.oracles import expect_grads_match, reference_grads
from tests.graders.support.compare import describe_call
from tests.graders.support.inputs import key_mask, mha_state, permutation, tensor
from tests.graders.support.mha_checks import (
    build,
    expect_refuses_indivisible,
    mask_hints,
    parameter_mistakes,
)
from tests.graders.support.mha_compare import expect_mha_pair, output_of
from tests.graders.support.mha_mistakes import (
    KV_FROM_QUERY_FAILED,
    kv_from_query_sizes,
    mha,
    mha_mistakes,
)
from tests.graders.support.mha_packed import packing_hint
from tests.graders.support.mistakes import hint_on_error
from tests.graders.support.params import (
    expect_gradients,
    expect_parameters,
    forward_first,
    linear_parameters,
)

pytestmark = pytest.mark.multi_head_attention

KEYS_AS_A_SET = (
    "the output changes when the key/value pairs are permuted together: attention must treat "
    "the keys as a set, so each key must stay with its own value and no head may mix tokens"
)


@pytest.fixture
def MHA(learner):
    return learner.module("multi_head_attention").MultiHeadAttention


def pair(MHA, reference, rng, d_model, heads, bias=True, *, learner, **kwargs):
    """The learner's and the reference's MultiHeadAttention with the same seeded weights."""
    state = mha_state(rng, d_model, bias)
    what = f"MultiHeadAttention({d_model}, {heads}, bias={bias})"
    m = build(MHA, learner, d_model, heads, bias=bias, state=state, what=what, **kwargs)
    ref = reference.build(
        "multi_head_attention", "MultiHeadAttention", d_model, heads, bias=bias, state=state
    )
    return m, ref, state


def check(
    m,
    ref,
    state,
    heads,
    q,
    k,
    v,
    mask=None,
    *,
    name,
    note="",
    built_in=False,
    atol=1e-5,
    dropout=0.0,
):
    """(output, weights) equal the reference's (or nn.MultiheadAttention's when `built_in`);
    known mistakes are named."""
    if built_in:
        expected = mha(state, heads, q, k, v, mask)
    else:
        with torch.no_grad():
            expected = ref(q, k, v, mask)
    shown = (("query", q), ("key", k), ("value", v), ("mask", mask))
    with mask_hints(mask, heads, q), packing_hint(q, k):
        got = m(q, k, v, mask)
    expect_mha_pair(
        got,
        expected,
        state=state,
        heads=heads,
        inputs=(q, k, v, mask),
        what=describe_call(name, *shown, note=note),
        atol=atol,
        dropout=dropout,
    )


@pytest.mark.parametrize("d_model, heads", [(12, 5), (7, 2)], ids=["12_by_5", "7_by_2"])
def test_rejects_indivisible_widths(MHA, d_model, heads):
    """raises ValueError for other indivisible widths"""
    expect_refuses_indivisible(MHA, d_model, heads, what=f"MultiHeadAttention({d_model}, {heads})")


def test_parameters_other_width(MHA, learner):
    """MultiHeadAttention(24, 6) has four (24, 24) projections with biases"""
    expected = linear_parameters({n: (24, 24) for n in ("W_q", "W_k", "W_v", "W_o")}, bias=True)
    what = "MultiHeadAttention(24, 6)"
    expect_parameters(learner, MHA(24, 6), expected, what=what, named=parameter_mistakes)


@pytest.mark.weight(3)
@pytest.mark.parametrize("heads", [3, 6], ids=["h=3", "h=6"])
def test_cross_attention_with_blank_rows(MHA, learner, reference, rng, heads):
    """cross-attention (L != S) with a (B, L, S) mask, some queries fully masked"""
    m, ref, state = pair(MHA, reference, rng, 24, heads, learner=learner)
    q, kv = tensor(rng, 3, 4, 24), tensor(rng, 3, 7, 24)
    mask = torch.from_numpy(key_mask(rng, 3, 4, 7, blank_rows=1))
    with hint_on_error(KV_FROM_QUERY_FAILED, when=kv_from_query_sizes(4, 7)):
        check(m, ref, state, heads, q, kv, kv, mask, name=f"MultiHeadAttention(24, {heads})")


@pytest.mark.weight(2)
def test_matches_pytorch_other_width(MHA, learner, reference, rng):
    """MultiHeadAttention(20, 5) with a (L, S) mask equals nn.MultiheadAttention"""
    m, ref, state = pair(MHA, reference, rng, 20, 5, learner=learner)
    q, k, v = tensor(rng, 2, 6, 20), tensor(rng, 2, 3, 20), tensor(rng, 2, 3, 20)
    mask = torch.from_numpy(key_mask(rng, 6, 3))
    with hint_on_error(KV_FROM_QUERY_FAILED, when=kv_from_query_sizes(6, 3)):
        check(m, ref, state, 5, q, k, v, mask, name="MultiHeadAttention(20, 5)", built_in=True)


@pytest.mark.weight(2)
def test_per_head_mask(MHA, learner, reference, rng):
    """a (B, h, L, S) mask, one per batch element and head, hides keys from that head only"""
    m, ref, state = pair(MHA, reference, rng, 12, 3, learner=learner)
    q, kv = tensor(rng, 2, 4, 12), tensor(rng, 2, 6, 12)
    mask = torch.from_numpy(key_mask(rng, 2, 3, 4, 6))
    with hint_on_error(KV_FROM_QUERY_FAILED, when=kv_from_query_sizes(4, 6)):
        check(m, ref, state, 3, q, kv, kv, mask, name="MultiHeadAttention(12, 3)")


def test_single_head(MHA, learner, reference, rng):
    """with one head, equals the reference"""
    m, ref, state = pair(MHA, reference, rng, 8, 1, learner=learner)
    x = tensor(rng, 2, 5, 8)
    check(m, ref, state, 1, x, x, x, name="MultiHeadAttention(8, 1)")


def test_bias_false_with_mask(MHA, learner, reference, rng):
    """bias=False with a per-batch mask equals the reference"""
    m, ref, state = pair(MHA, reference, rng, 12, 3, bias=False, learner=learner)
    x = tensor(rng, 2, 6, 12)
    mask = torch.from_numpy(key_mask(rng, 2, 6, 6))
    check(m, ref, state, 3, x, x, x, mask, name="MultiHeadAttention(12, 3, bias=False)")


def test_dropout_is_off_in_eval(MHA, learner, reference, rng):
    """MultiHeadAttention(16, 4, dropout=0.5) in eval mode is deterministic and exact"""
    m, ref, state = pair(MHA, reference, rng, 16, 4, dropout=0.5, learner=learner)
    x = tensor(rng, 2, 5, 16)
    name = "MultiHeadAttention(16, 4, dropout=0.5)"
    check(m, ref, state, 4, x, x, x, name=name, note=" in eval mode", dropout=0.5)


def test_float64(MHA, learner, reference, rng):
    """after .double(), float64 inputs give float64 outputs equal to the reference"""
    m, ref, state = pair(MHA, reference, rng, 12, 4, learner=learner)
    m.double()
    ref.double()
    x = tensor(rng, 2, 3, 12, dtype=torch.float64)
    name = "MultiHeadAttention(12, 4).double()"
    expect_dtype(m(x, x, x)[0], torch.float64, what=f"the output of {name}(x, x, x)")
    state = {key: value.double() for key, value in state.items()}
    check(m, ref, state, 4, x, x, x, name=name, atol=1e-10)


@pytest.mark.weight(2)
def test_gradients_match_reference(MHA, learner, reference, rng):
    """gradients of every parameter equal the reference's, with a mask"""
    m, ref, state = pair(MHA, reference, rng, 12, 3, learner=learner)
    q, kv = tensor(rng, 2, 4, 12), tensor(rng, 2, 5, 12)
    mask = torch.from_numpy(key_mask(rng, 2, 4, 5))
    g = tensor(rng, 2, 4, 12)
    what = describe_call("MultiHeadAttention(12, 3)", ("query", q), ("key", kv), ("mask", mask))

    def forward():  # a wrong gradient is explained by the forward pass, when that differs
        check(m, ref, state, 3, q, kv, kv, mask, name="MultiHeadAttention(12, 3)")

    with (
        hint_on_error(KV_FROM_QUERY_FAILED, when=kv_from_query_sizes(4, 5)),
        mask_hints(mask, 3, q),
        packing_hint(q, kv),
        forward_first(forward),
    ):
        expect_gradients(learner, m, q, kv, kv, mask, cotangent=g, what=what)
        expect_grads_match(
            learner.parameter_grads(m, q, kv, kv, mask, cotangent=g),
            reference_grads(ref, q, kv, kv, mask, cotangent=g),
            what=what,
            atol=1e-4,
        )


def test_cross_attention_keeps_inputs_and_key_order(MHA, learner, reference, rng):
    """inputs are not modified, and permuting keys with values changes nothing"""
    m, _, state = pair(MHA, reference, rng, 12, 2, learner=learner)
    q, k, v = tensor(rng, 1, 3, 12), tensor(rng, 1, 6, 12), tensor(rng, 1, 6, 12)
    with packing_hint(q, k):
        call = m.call(q.clone(), k.clone(), v.clone())
    for name, before, after in zip(("query", "key", "value"), (q, k, v), call.args, strict=True):
        expect_close(after, before, what=f"{name} after the call", atol=0)
    out = output_of(call.value, what="MultiHeadAttention(12, 2)(query, key, value)")
    p = torch.from_numpy(permutation(rng, 6))
    k_p, v_p = k[:, p], v[:, p]
    out_p = output_of(m(q, k_p, v_p), what="MultiHeadAttention(12, 2)(query, key, value)")
    expect_close(
        out_p,
        out,
        what="the output with keys and values permuted together",
        atol=1e-5,
        hint=KEYS_AS_A_SET,
        mistakes=mha_mistakes(state, 2, q, k_p, v_p)[0],
    )
