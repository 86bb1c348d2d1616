"""Visible graders for t101/multi_head_attention.py: MultiHeadAttention(d_model, num_heads).

Expected values come from nn.MultiheadAttention loaded with the same weights
(support.torch_equivalents). Symbols: B batch, L queries, S keys, d_model width, h heads.
"""

from __future__ import annotations

import pytest
import torch

from autograder.feedback import (
    GradingFailure,
    expect,
    expect_close,
    expect_dtype,
    expect_shape,
    expect_type,
)
from tests.graders.support.catalogue import mistake
from tests.graders.support.compare import describe_call
from tests.graders.support.dropout import DEFAULT_P, IGNORED_P, OTHER_P, P, fit, fitted_p
from tests.graders.support.inputs import key_mask, mha_state, permutation, tensor
from tests.graders.support.mha_checks import (
    build,
    expect_refuses_indivisible,
    mask_hints,
    parameter_mistakes,
    rows_from_dropped_weights,
)
from tests.graders.support.mha_compare import expect_mha_pair, output_of
from tests.graders.support.mha_mistakes import mha, mha_mistakes, output_from_weights
from tests.graders.support.mha_packed import packing_hint
from tests.graders.support.params import (
    expect_gradients,
    expect_parameters,
    forward_first,
    linear_parameters,
)

pytestmark = pytest.mark.multi_head_attention

DROPOUT_MISSING = "multi_head_attention/dropout-missing"
DROPOUT_P_IGNORED = "multi_head_attention/dropout-p-ignored"
DROPOUT_ON_OUTPUT = "multi_head_attention/dropout-on-output"
WEIGHTS_BEFORE_DROPOUT = "multi_head_attention/weights-before-dropout"

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


def loaded(MHA, learner, rng, d_model=D_MODEL, heads=HEADS, bias=True):
    """A learner MultiHeadAttention in eval mode with seeded weights, and those weights."""
    state = mha_state(rng, d_model, bias)
    what = f"MultiHeadAttention({d_model}, {heads}, bias={bias})"
    m = build(MHA, learner, d_model, heads, bias=bias, state=state, what=what)  # one round trip
    return m, state


def check_against_pytorch(m, state, heads, q, k, v, mask=None, *, name="MultiHeadAttention"):
    """The learner's (output, weights (B, h, L, S)) equal nn.MultiheadAttention's; a known
    mistake is named, and any other difference located (support.mha_compare)."""
    shown = (("query", q), ("key", k), ("value", v), ("mask", mask))
    with mask_hints(mask, heads, q), packing_hint(q, k):
        got = m(q, k, v, mask)
    expect_mha_pair(
        got,
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
    expect_refuses_indivisible(MHA, 10, 4, what="MultiHeadAttention(10, 4)")


@pytest.mark.parametrize("bias", [True, False], ids=["bias=True", "bias=False"])
def test_parameters(MHA, learner, bias):
    """has W_q, W_k, W_v, W_o, each nn.Linear(d_model, d_model, bias=bias)"""
    m = MHA(D_MODEL, HEADS, bias=bias)
    expected = linear_parameters(
        {"W_q": (16, 16), "W_k": (16, 16), "W_v": (16, 16), "W_o": (16, 16)}, bias
    )
    what = f"MultiHeadAttention(16, 4, bias={bias})"
    expect_parameters(learner, m, expected, what=what, named=parameter_mistakes)


@pytest.mark.weight(3)
def test_self_attention_matches_pytorch(MHA, learner, rng):
    """self-attention equals nn.MultiheadAttention: output and per-head weights (B, h, L, S)"""
    m, state = loaded(MHA, learner, rng)
    x = tensor(rng, 2, 5, D_MODEL)
    check_against_pytorch(m, state, HEADS, x, x, x, name="MultiHeadAttention(16, 4)")


@pytest.mark.weight(2)
def test_cross_attention_matches_pytorch(MHA, learner, rng):
    """cross-attention (L != S) equals nn.MultiheadAttention"""
    m, state = loaded(MHA, learner, rng)
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
@pytest.mark.parametrize(
    "shape", [(5, 5), (2, 5, 5), (2, HEADS, 5, 5)], ids=["mask_L_S", "mask_B_L_S", "mask_B_h_L_S"]
)
def test_mask_matches_pytorch(MHA, learner, rng, shape):
    """a mask (L, S), (B, L, S) or (B, h, L, S) hides keys (True = may attend)"""
    m, state = loaded(MHA, learner, rng)
    x = tensor(rng, 2, 5, D_MODEL)
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


def test_bias_false_matches_pytorch(MHA, learner, rng):
    """with bias=False, equals nn.MultiheadAttention(bias=False)"""
    m, state = loaded(MHA, learner, rng, bias=False)
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
    m, state = loaded(MHA, learner, rng)
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


def test_keeps_float32_and_input(MHA, learner, rng):
    """keeps float32 and does not modify its inputs"""
    m, _ = loaded(MHA, learner, rng)
    q, kv = tensor(rng, 2, 3, D_MODEL), tensor(rng, 2, 4, D_MODEL)
    with packing_hint(q, kv):
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


def test_permuting_tokens_permutes_outputs(MHA, learner, rng):
    """permuting the tokens of x permutes the outputs of self-attention"""
    m, state = loaded(MHA, learner, rng)
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
    expect(  # outputs that ignore the queries permute as well: permuted, they must move
        not torch.allclose(out_p.double(), out.double(), atol=1e-5),
        "Permuting the tokens of x left every output where it was, so the tokens that moved "
        "got the same output: each token's output comes from its own query, "
        "softmax(Q K^T / sqrt(d_k)) V in each head, then W_o.",
    )


TRAIN_CALL = f"MultiHeadAttention({D_MODEL}, {HEADS}, dropout={P})"
WEIGHTS_NOT_SCALED = (
    "In train mode the weights {what} returned drop entries but do not scale the kept ones by "
    "1/(1 - p): use nn.Dropout, which does."
)
WEIGHTS_ELSEWHERE = (
    "In train mode each weight {what} returned must be 0 (dropped) or its eval-mode value "
    "divided by 1 - p (kept): apply self.dropout once, to the softmax's weights (B, h, L, S)."
)
OUTPUT_ELSEWHERE = (
    "In train mode {what} returned weights without dropout, and an output that is neither its "
    "eval-mode output nor one a dropout of the weights or of the output gives: apply "
    "self.dropout once, to the weights after the softmax, then use and return those weights."
)
OUTPUT_NOT_FROM_WEIGHTS = (
    "the output must use the weights after the dropout, the ones returned: "
    "concat(weights @ V_heads) W_o"
)


def test_dropout_in_train_mode(MHA, learner, rng):
    """in train mode, drops attention weights (scaling the kept ones by 1/(1-p)) and uses them

    Dropout is judged against the learner's own eval-mode call (the weights it returns there,
    dropped or kept), so that a mistake in eval mode (a scale, say) and one in the dropout are
    each named; then the eval-mode call is checked itself."""
    state = mha_state(rng, D_MODEL)
    m = build(MHA, learner, D_MODEL, HEADS, dropout=P, state=state, what=TRAIN_CALL)
    x = tensor(rng, 2, 5, D_MODEL)
    what = f"{TRAIN_CALL}(x, x, x) with x (2, 5, {D_MODEL})"
    in_eval = m(x, x, x)

    def eval_mode() -> None:
        expect_mha_pair(
            in_eval,
            mha(state, HEADS, x, x, x),  # eval mode: nothing dropped
            state=state,
            heads=HEADS,
            inputs=(x, x, x, None),
            what=f"{what} in eval mode",
            atol=1e-5,
            hints=(MERGE_HINT, SPLIT_HINT),
            dropout=P,
        )

    own = (output_of(in_eval, what=f"{what} in eval mode"), in_eval[1])
    expect_type(own[1], torch.Tensor, what=f"the weights of {what} in eval mode")
    layout = _contract_layout(tuple(own[1].shape), eval_mode)
    own = (own[0], layout(own[1]))
    m.train()
    got = m(x, x, x)
    output_of(got, what=what)
    expect_type(got[1], torch.Tensor, what=f"the weights of {what}")
    got = (got[0], layout(got[1]))
    expect_shape(got[1], tuple(own[1].shape), what=f"the weights of {what}")
    try:
        expect_train_dropout(got, own, state, x, what=what)
    except GradingFailure as failure:
        if "[multi_head_attention/" not in failure.message:  # the eval call may explain it
            eval_mode()
        raise
    eval_mode()


def _contract_layout(shape: tuple, eval_mode):
    """The function that lays weights of `shape` out as (B, h, L, S): the identity, or a swap
    of the first two axes for weights laid out head-first (named by the eval-mode check at the
    end); weights of any other shape fail the eval-mode check at once."""
    if shape == (HEADS, 2, 5, 5):
        return lambda weights: weights.transpose(0, 1)
    if shape != (2, HEADS, 5, 5):
        eval_mode()
    return lambda weights: weights


def expect_train_dropout(got, expected, state, x, *, what: str) -> None:
    """Where the dropout acts, from what the call returned in train mode: the returned weights
    dropped (and the output made from them, once, with nothing dropped after W_o), or which
    mistake the weights and the output show."""
    weights, zero = expected[1], torch.zeros(())
    if fit(got[1], zero, weights / (1 - DEFAULT_P), atol=1e-6).dropout_seen:
        raise GradingFailure(f"{IGNORED_P.format(what=what, p=P)} {mistake(DROPOUT_P_IGNORED)}")
    q = fitted_p(got[1], zero, weights, atol=1e-6)  # a probability of its own, e.g. fixed at 0.1
    if q is not None and abs(q - P) > 1e-3:
        raise GradingFailure(f"{OTHER_P.format(what=what, q=q, p=P)}. {mistake(DROPOUT_P_IGNORED)}")
    if fit(got[1], zero, weights / (1 - P), atol=1e-6).dropout_seen:
        from_weights = output_from_weights(state, HEADS, got[1], x)
        if fit(got[0], zero, from_weights / (1 - P), atol=1e-5).dropout_seen:
            raise GradingFailure(f"In train mode, {what}: {mistake(DROPOUT_ON_OUTPUT)}")
        expect_close(
            got[0],
            from_weights,
            what=f"the output of {what}",
            atol=1e-5,
            hint=OUTPUT_NOT_FROM_WEIGHTS,
        )
        return
    if not fit(got[1], zero, weights, atol=1e-6).fits:
        raise GradingFailure(WEIGHTS_ELSEWHERE.format(what=what))
    if not _close(got[1], weights):
        raise GradingFailure(WEIGHTS_NOT_SCALED.format(what=what))
    # The weights show no dropout: the output tells whether there is one, and where.
    if _close(got[0], expected[0]):
        raise GradingFailure(f"In train mode, {what}: {mistake(DROPOUT_MISSING)}")
    if fit(got[0], zero, expected[0] / (1 - P), atol=1e-5).dropout_seen:
        raise GradingFailure(f"In train mode, {what}: {mistake(DROPOUT_ON_OUTPUT)}")
    if rows_from_dropped_weights(got[0], weights, state, HEADS, x, P):
        raise GradingFailure(f"In train mode, {what}: {mistake(WEIGHTS_BEFORE_DROPOUT)}")
    raise GradingFailure(OUTPUT_ELSEWHERE.format(what=what))


def _close(got: torch.Tensor, expected: torch.Tensor) -> bool:
    same_shape = tuple(got.shape) == tuple(expected.shape)
    return same_shape and bool(torch.allclose(got.double(), expected.double(), atol=1e-5))
