"""Visible graders for t101/feed_forward.py: PositionwiseFeedForward(d_model, d_ff).

Expected values are computed from the learner's own weights with torch built-ins (F.linear,
F.relu; support.ffn_mistakes, which also names the catalogued mistakes). Symbols: B batch,
L tokens, d_model width, d_ff inner width.
"""

from __future__ import annotations

import pytest
import torch

from autograder.feedback import GradingFailure, expect, expect_close, expect_shape, expect_type
from tests.graders.support.catalogue import mistake
from tests.graders.support.dropout import DEFAULT_P, IGNORED_P, OTHER_P, P, fit, fitted_p
from tests.graders.support.ffn_mistakes import (
    DROPOUT_AFTER_SECOND_LINEAR,
    DROPOUT_MISSING,
    DROPOUT_P_IGNORED,
    expected_and_mistakes,
    parameter_mistakes,
)
from tests.graders.support.inputs import tensor
from tests.graders.support.params import (
    expect_gradients,
    expect_parameters,
    linear_parameters,
    seeded_state,
)

pytestmark = pytest.mark.feed_forward

D_MODEL, D_FF = 8, 32
PARAMETERS = linear_parameters({"W_1": (D_FF, D_MODEL), "W_2": (D_MODEL, D_FF)}, bias=True)


def seeded_ffn(learner, rng):
    """A learner PositionwiseFeedForward(8, 32) in eval mode with seeded weights."""
    m = learner.module("feed_forward").PositionwiseFeedForward(D_MODEL, D_FF)
    state = seeded_state(
        learner, m, rng, PARAMETERS, what="PositionwiseFeedForward(8, 32)", named=parameter_mistakes
    )
    learner.chain(m, [("load_state_dict", (state,), {}), ("eval", (), {})])  # one round trip
    return m


def test_parameters(learner):
    """has W_1 = nn.Linear(d_model, d_ff) and W_2 = nn.Linear(d_ff, d_model)"""
    m = learner.module("feed_forward").PositionwiseFeedForward(D_MODEL, D_FF)
    expect_parameters(
        learner, m, PARAMETERS, what="PositionwiseFeedForward(8, 32)", named=parameter_mistakes
    )


@pytest.mark.weight(3)
@pytest.mark.parametrize("shape", [(5, D_MODEL), (2, 5, D_MODEL)], ids=["2d", "3d"])
def test_equals_w2_relu_w1(learner, rng, shape):
    """equals W_2(relu(W_1 x)) on (L, d_model) and (B, L, d_model) inputs"""
    ffn = seeded_ffn(learner, rng)
    x = tensor(rng, *shape)
    what = f"PositionwiseFeedForward(8, 32)(x) with x {shape}"
    got = ffn(x)
    expect_type(got, torch.Tensor, what=what)
    expect_shape(got, shape, what=what, hint="the output keeps the input's shape (..., d_model)")
    expected, mistakes = expected_and_mistakes(ffn.state_dict(), x)
    expect_close(
        got,
        expected,
        what=what,
        atol=1e-5,
        mistakes=mistakes,
        hint="compute W_2(dropout(relu(W_1(x))))",
    )


@pytest.mark.weight(2)
def test_position_wise(learner, rng):
    """changing one token changes only that token's output"""
    ffn = seeded_ffn(learner, rng)
    x = tensor(rng, 1, 6, D_MODEL)
    changed = x.clone()
    changed[0, 2] = tensor(rng, D_MODEL)
    before, after = ffn(x), ffn(changed)
    for got in (before, after):
        expect_type(got, torch.Tensor, what="the output of PositionwiseFeedForward(x)")
    keep = [i for i in range(6) if i != 2]
    expect_close(
        after[:, keep],
        before[:, keep],
        what="the outputs of the other tokens after changing token 2",
        atol=1e-6,
        hint="apply the same two linear maps to each token on its own, never across "
        "tokens (nn.Linear acts on the last axis)",
    )
    expect(  # an output that ignores its input keeps the other tokens too
        not torch.allclose(after[:, 2], before[:, 2], atol=1e-6),
        "The output of token 2 did not change when token 2 did: each token's output is "
        "computed from that token, W_2(relu(W_1(x))).",
    )


def test_gradients_reach_every_parameter(learner, rng):
    """gradients reach W_1 and W_2"""
    ffn = seeded_ffn(learner, rng)
    x = tensor(rng, 2, 3, D_MODEL)
    expect_gradients(
        learner,
        ffn,
        x,
        cotangent=tensor(rng, 2, 3, D_MODEL),
        what="PositionwiseFeedForward(8, 32)(x)",
    )


TRAIN_CALL = f"PositionwiseFeedForward({D_MODEL}, {D_MODEL}, dropout={P})"
DROPOUT_UNUSED = (
    "{what} in train mode gives its eval-mode output: no dropout is applied. "
    + mistake(DROPOUT_MISSING)
)
DROPOUT_NOT_SCALED = (
    "{what} in train mode drops hidden units but does not scale the kept ones by 1/(1 - p): "
    "use nn.Dropout, which does."
)
DROPOUT_ELSEWHERE = (
    "{what} in train mode is not W_2(dropout(relu(W_1(x)))) for any choice of dropped hidden "
    "units: apply self.dropout once, to relu(W_1(x)), and nowhere else."
)


def test_dropout_in_train_mode(learner, rng):
    """in train mode, drops hidden units after the ReLU and scales the kept ones by 1/(1-p)

    W_2 is the identity and its bias 0.5, so each output element shows one hidden unit: the
    learner's own eval-mode output, minus the bias, is its hidden activation, whatever its
    activation function; dropout is judged against that, then the eval-mode output itself."""
    m = learner.module("feed_forward").PositionwiseFeedForward(D_MODEL, D_MODEL, P)
    square = linear_parameters({"W_1": (D_MODEL, D_MODEL), "W_2": (D_MODEL, D_MODEL)}, bias=True)
    state = seeded_state(learner, m, rng, square, what=TRAIN_CALL, named=parameter_mistakes)
    state["W_2.weight"], state["W_2.bias"] = torch.eye(D_MODEL), torch.full((D_MODEL,), 0.5)
    learner.chain(m, [("load_state_dict", (state,), {}), ("eval", (), {})])
    x = tensor(rng, 4, 6, D_MODEL)
    what = f"{TRAIN_CALL}(x) with x (4, 6, {D_MODEL})"
    in_eval = m(x)
    expect_type(in_eval, torch.Tensor, what=what)
    expect_shape(in_eval, tuple(x.shape), what=what)
    m.train()
    got = m(x)
    expect_type(got, torch.Tensor, what=what)
    expect_shape(got, tuple(x.shape), what=what)
    expected, mistakes = expected_and_mistakes(state, x)  # bias + relu(W_1 x)
    try:
        _expect_hidden_dropout(got, in_eval.detach(), state["W_2.bias"], what=what)
    except GradingFailure as failure:
        if "[feed_forward/" not in failure.message:  # a wrong eval output may explain it
            expect_close(
                in_eval, expected, what=f"{what} in eval mode", atol=1e-5, mistakes=mistakes
            )
        raise
    expect_close(in_eval, expected, what=f"{what} in eval mode", atol=1e-5, mistakes=mistakes)


def _expect_hidden_dropout(got, in_eval, bias, *, what: str) -> None:
    """The train-mode output drops hidden units of the learner's own eval-mode output (each
    element bias, or bias + hidden / (1 - p)), as nn.Dropout on the hidden activations does."""
    hidden = in_eval - bias
    if fit(got, bias, bias + hidden / (1 - P), atol=1e-5).dropout_seen:
        return
    if fit(got, bias, bias + hidden / (1 - DEFAULT_P), atol=1e-5).dropout_seen:
        raise GradingFailure(f"{IGNORED_P.format(what=what, p=P)} {mistake(DROPOUT_P_IGNORED)}")
    q = fitted_p(got, bias, in_eval, atol=1e-5)  # a probability of its own, e.g. fixed at 0.1
    if q is not None:
        raise GradingFailure(f"{OTHER_P.format(what=what, q=q, p=P)}. {mistake(DROPOUT_P_IGNORED)}")
    if fit(got, bias, in_eval, atol=1e-5).fits:
        unused = _close(got, in_eval)
        raise GradingFailure((DROPOUT_UNUSED if unused else DROPOUT_NOT_SCALED).format(what=what))
    if fit(got, torch.zeros(()), in_eval / (1 - P), atol=1e-5).dropout_seen:
        raise GradingFailure(f"In train mode, {what}: {mistake(DROPOUT_AFTER_SECOND_LINEAR)}")
    raise GradingFailure(DROPOUT_ELSEWHERE.format(what=what))


def _close(got: torch.Tensor, expected: torch.Tensor) -> bool:
    same_shape = tuple(got.shape) == tuple(expected.shape)
    return same_shape and bool(torch.allclose(got.double(), expected.double(), atol=1e-5))
