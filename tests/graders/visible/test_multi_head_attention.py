"""Visible graders for t101/multi_head_attention.py: MultiHeadAttention(d_model, num_heads).

Expected values come from nn.MultiheadAttention loaded with the same weights
(support.torch_equivalents). Symbols: B batch, L queries, S keys, d_model width, h heads.
"""

from __future__ import annotations

import pytest
import torch

from autograder.feedback import (
    GradingFailure,
    expect_close,
    expect_dtype,
    expect_raises,
    expect_shape,
    expect_type,
)
from tests.graders.support.compare import describe_call
from tests.graders.support.dropout import DEFAULT_P, IGNORED_P, P, fit
from tests.graders.support.inputs import key_mask, mha_state, permutation, tensor
from tests.graders.support.mha_compare import expect_mha_pair, output_of
from tests.graders.support.mha_mistakes import mha, mha_mistakes, output_from_weights
from tests.graders.support.params import (
    expect_gradients,
    expect_parameters,
    forward_first,
    linear_parameters,
)

pytestmark = pytest.mark.multi_head_attention

D_MODEL, HEADS = 16, 4
SPLIT_HINT = (
    "return the per-head weights (B, h, L, S), not their average; split the heads with "
    ".view(B, L, h, d_k).transpose(1, 2) so that head i takes features i*d_k:(i+1)*d_k of "
    "every token"
)
MERGE_HINT = (
    "merge the heads (B, h, L, d_k) back with .transpose(1, 2).reshape(B, L, d_model) (a plain "
    "reshape mixes tokens), then apply W_o"
)


@pytest.fixture
def MHA(learner):
    return learner.module("multi_head_attention").MultiHeadAttention


def loaded(MHA, rng, d_model=D_MODEL, heads=HEADS, bias=True):
    """A learner MultiHeadAttention in eval mode with seeded weights, and those weights."""
    state = mha_state(rng, d_model, bias)
    m = MHA.build(d_model, heads, bias=bias, state=state)  # one round trip
    return m, state


def check_against_pytorch(m, state, heads, q, k, v, mask=None, *, name="MultiHeadAttention"):
    """The learner's (output, weights (B, h, L, S)) equal nn.MultiheadAttention's; a known
    mistake is named, and any other difference located (support.mha_compare)."""
    shown = (("query", q), ("key", k), ("value", v), ("mask", mask))
    expect_mha_pair(
        m(q, k, v, mask),
        mha(state, heads, q, k, v, mask),
        state=state,
        heads=heads,
        inputs=(q, k, v, mask),
        what=describe_call(name, *shown),
        atol=1e-5,
        hints=(MERGE_HINT, SPLIT_HINT),
    )


def test_rejects_indivisible_width(MHA):
    """raises ValueError when d_model is not divisible by num_heads"""
    expect_raises("ValueError", MHA, 10, 4, what="MultiHeadAttention(10, 4)")


@pytest.mark.parametrize("bias", [True, False], ids=["bias=True", "bias=False"])
def test_parameters(MHA, learner, bias):
    """has W_q, W_k, W_v, W_o, each nn.Linear(d_model, d_model, bias=bias)"""
    m = MHA(D_MODEL, HEADS, bias=bias)
    expected = linear_parameters(
        {"W_q": (16, 16), "W_k": (16, 16), "W_v": (16, 16), "W_o": (16, 16)}, bias
    )
    expect_parameters(learner, m, expected, what=f"MultiHeadAttention(16, 4, bias={bias})")


@pytest.mark.weight(3)
def test_self_attention_matches_pytorch(MHA, rng):
    """self-attention equals nn.MultiheadAttention: output and per-head weights (B, h, L, S)"""
    m, state = loaded(MHA, rng)
    x = tensor(rng, 2, 5, D_MODEL)
    check_against_pytorch(m, state, HEADS, x, x, x, name="MultiHeadAttention(16, 4)")


@pytest.mark.weight(2)
def test_cross_attention_matches_pytorch(MHA, rng):
    """cross-attention (L != S) equals nn.MultiheadAttention"""
    m, state = loaded(MHA, rng)
    q, kv = tensor(rng, 2, 3, D_MODEL), tensor(rng, 2, 6, D_MODEL)
    v = tensor(rng, 2, 6, D_MODEL)
    check_against_pytorch(
        m,
        state,
        HEADS,
        q,
        kv,
        v,
        name="MultiHeadAttention(16, 4)",
    )


@pytest.mark.weight(2)
@pytest.mark.parametrize("per_batch", [False, True], ids=["mask_L_S", "mask_B_L_S"])
def test_mask_matches_pytorch(MHA, rng, per_batch):
    """a mask (L, S) or (B, L, S) hides keys from every head (True = may attend)"""
    m, state = loaded(MHA, rng)
    x = tensor(rng, 2, 5, D_MODEL)
    shape = (2, 5, 5) if per_batch else (5, 5)
    mask = torch.from_numpy(key_mask(rng, *shape))
    check_against_pytorch(
        m,
        state,
        HEADS,
        x,
        x,
        x,
        mask,
        name="MultiHeadAttention(16, 4)",
    )


def test_bias_false_matches_pytorch(MHA, rng):
    """with bias=False, equals nn.MultiheadAttention(bias=False)"""
    m, state = loaded(MHA, rng, bias=False)
    x = tensor(rng, 1, 4, D_MODEL)
    check_against_pytorch(
        m,
        state,
        HEADS,
        x,
        x,
        x,
        name="MultiHeadAttention(16, 4, bias=False)",
    )


def test_gradients_reach_every_parameter(MHA, learner, rng):
    """gradients reach W_q, W_k, W_v and W_o"""
    m, state = loaded(MHA, rng)
    x = tensor(rng, 2, 4, D_MODEL)
    forward = lambda: check_against_pytorch(m, state, HEADS, x, x, x)  # noqa: E731
    with forward_first(forward):  # a missing gradient may come from a wrong forward pass
        expect_gradients(
            learner,
            m,
            x,
            x,
            x,
            cotangent=tensor(rng, 2, 4, D_MODEL),
            what="MultiHeadAttention(16, 4)(x, x, x)",
        )


def test_keeps_float32_and_input(MHA, rng):
    """keeps float32 and does not modify its inputs"""
    m, _ = loaded(MHA, rng)
    q, kv = tensor(rng, 2, 3, D_MODEL), tensor(rng, 2, 4, D_MODEL)
    call = m.call(q.clone(), kv.clone(), kv.clone())
    expect_dtype(call.value[0], torch.float32, what="the output for float32 inputs")
    for name, before, after in zip(("query", "key", "value"), (q, kv, kv), call.args, strict=True):
        expect_close(
            after,
            before,
            what=f"{name} after the call",
            atol=0,
            hint="do not modify the inputs in place (no +=, no .add_())",
        )


def test_permuting_tokens_permutes_outputs(MHA, rng):
    """permuting the tokens of x permutes the outputs of self-attention"""
    m, state = loaded(MHA, rng)
    x = tensor(rng, 1, 6, D_MODEL)
    p = torch.from_numpy(permutation(rng, 6))
    out = output_of(m(x, x, x), what="MultiHeadAttention(16, 4)(x, x, x)")
    x_p = x[:, p]
    out_p = output_of(m(x_p, x_p, x_p), what="MultiHeadAttention(16, 4)(x[:, p], x[:, p], x[:, p])")
    expect_close(
        out_p,
        out[:, p],
        what="MultiHeadAttention(16, 4)(x[:, p], x[:, p], x[:, p])",
        atol=1e-5,
        hint="each token's output must depend only on its own query and "
        "on the set of keys: do not mix tokens when splitting heads",
        mistakes=mha_mistakes(state, HEADS, x_p, x_p, x_p)[0],
    )


TRAIN_CALL = f"MultiHeadAttention({D_MODEL}, {HEADS}, dropout={P})"
WEIGHTS_NOT_DROPPED = (
    "In train mode the weights {what} returned show no dropout: apply self.dropout (an "
    "nn.Dropout(dropout), active after .train()) to the attention weights after the softmax, "
    "then use and return those weights, as nn.MultiheadAttention does."
)
OUTPUT_DROPPED = (
    "In train mode {what} returned weights without dropout and an output that changed: the "
    "dropout belongs on the attention weights (after the softmax), whose product with V is "
    "the output, not on the output itself."
)
WEIGHTS_NOT_SCALED = (
    "In train mode the weights {what} returned drop entries but do not scale the kept ones by "
    "1/(1 - p): use nn.Dropout, which does."
)
WEIGHTS_ELSEWHERE = (
    "In train mode each weight {what} returned must be 0 (dropped) or its eval-mode value "
    "divided by 1 - p (kept): apply self.dropout once, to the softmax's weights (B, h, L, S)."
)


def test_dropout_in_train_mode(MHA, learner, rng):
    """in train mode, drops attention weights (scaling the kept ones by 1/(1-p)) and uses them"""
    state = mha_state(rng, D_MODEL)
    m = MHA.build(D_MODEL, HEADS, dropout=P, state=state)  # in eval mode
    x = tensor(rng, 2, 5, D_MODEL)
    what = f"{TRAIN_CALL}(x, x, x) with x (2, 5, {D_MODEL})"
    expected = mha(state, HEADS, x, x, x)  # eval mode: nothing dropped
    expect_mha_pair(
        m(x, x, x),
        expected,
        state=state,
        heads=HEADS,
        inputs=(x, x, x, None),
        what=f"{what} in eval mode",
        atol=1e-5,
        hints=(MERGE_HINT, SPLIT_HINT),
        dropout=P,
    )
    weights = expected[1]
    m.train()
    got = m(x, x, x)
    output_of(got, what=what)
    expect_type(got[1], torch.Tensor, what=f"the weights of {what}")
    expect_shape(got[1], (2, HEADS, 5, 5), what=f"the weights of {what}")
    zero = torch.zeros(())
    if fit(got[1], zero, weights / (1 - DEFAULT_P), atol=1e-6).dropout_seen:
        raise GradingFailure(IGNORED_P.format(what=what, p=P))
    if not fit(got[1], zero, weights / (1 - P), atol=1e-6).dropout_seen:
        if fit(got[1], zero, weights, atol=1e-6).fits:
            unused = bool(torch.allclose(got[1].double(), weights.double(), atol=1e-6))
            same = tuple(got[0].shape) == tuple(expected[0].shape) and bool(
                torch.allclose(got[0].double(), expected[0].double(), atol=1e-5)
            )
            if unused and not same:  # the weights kept, the output changed: dropped there
                raise GradingFailure(OUTPUT_DROPPED.format(what=what))
            raise GradingFailure(
                (WEIGHTS_NOT_DROPPED if unused else WEIGHTS_NOT_SCALED).format(what=what)
            )
        raise GradingFailure(WEIGHTS_ELSEWHERE.format(what=what))
    expect_close(
        got[0],
        output_from_weights(state, HEADS, got[1], x),
        what=f"the output of {what}",
        atol=1e-5,
        hint="the output must use the weights after the dropout, the ones returned: "
        "concat(weights @ V_heads) W_o",
    )
