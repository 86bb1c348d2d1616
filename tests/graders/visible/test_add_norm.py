"""Visible graders for t101/add_norm.py: AddNorm(d_model, dropout=0.0, eps=1e-5).

Expected values are computed from the learner's own LayerNorm weights with F.layer_norm
(support.add_norm_mistakes, which also names the catalogued mistakes).
Symbols: B batch, L tokens, d_model width.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
import torch

from autograder.feedback import (
    AnyOf,
    GradingFailure,
    Lazy,
    expect,
    expect_close,
    expect_shape,
    expect_type,
)
from tests.graders.support.add_norm_mistakes import (
    DEFAULT_EPS,
    EPS_IGNORED,
    NORM_WRONG_AXIS,
    dropout_in_eval,
    dropout_patterns,
    expected_and_mistakes,
)
from tests.graders.support.catalogue import mistake
from tests.graders.support.dropout import DEFAULT_P, EVAL_FIRST, IGNORED_P, P
from tests.graders.support.inputs import tensor
from tests.graders.support.params import expect_parameters, seeded_state

pytestmark = pytest.mark.add_norm

D_MODEL = 8
PARAMETERS = [("norm.bias", (D_MODEL,)), ("norm.weight", (D_MODEL,))]


def add_norm(learner, rng, eps=None, **kwargs):
    """A learner AddNorm(8, **kwargs) (with eps=eps when given) in eval mode with seeded
    LayerNorm weights."""
    AddNorm = learner.module("add_norm").AddNorm
    m = AddNorm(D_MODEL, **kwargs) if eps is None else AddNorm(D_MODEL, eps=eps, **kwargs)
    state = seeded_state(learner, m, rng, PARAMETERS, what="AddNorm(8)")
    learner.chain(m, [("load_state_dict", (state,), {}), ("eval", (), {})])  # one round trip
    return m


def test_parameters(learner):
    """has one LayerNorm called norm, with weight and bias (d_model,)"""
    m = learner.module("add_norm").AddNorm(D_MODEL)
    expect_parameters(
        learner,
        m,
        PARAMETERS,
        what="AddNorm(8)",
        hint="create self.norm = nn.LayerNorm(d_model, eps=eps)",
    )


@pytest.mark.weight(3)
@pytest.mark.parametrize("shape", [(5, D_MODEL), (2, 5, D_MODEL)], ids=["2d", "3d"])
def test_equals_layer_norm_of_sum(learner, rng, shape):
    """equals LayerNorm(x + sublayer_output) (post-norm)"""
    m = add_norm(learner, rng)
    x, s = tensor(rng, *shape), tensor(rng, *shape)
    what = f"AddNorm(8)(x, sublayer_output) with both {shape}"
    got = m(x, s)
    expect_shape(got, shape, what=what)
    expected, mistakes = expected_and_mistakes(m.state_dict(), x, s)
    expect_close(got, expected, what=what, atol=1e-5, mistakes=mistakes)


def test_eps_is_passed_to_layer_norm(learner, rng):
    """eps reaches the LayerNorm: AddNorm(8, eps=0.5)"""
    m = add_norm(learner, rng, eps=0.5)
    norm_eps = m.norm.eps
    fix = (
        mistake(EPS_IGNORED)
        if norm_eps == DEFAULT_EPS
        else "Hint: create self.norm = nn.LayerNorm(d_model, eps=eps)."
    )
    expect(norm_eps == 0.5, f"AddNorm(8, eps=0.5).norm.eps is {norm_eps!r}; expected 0.5. {fix}")
    x, s = tensor(rng, 3, D_MODEL, scale=0.3), tensor(rng, 3, D_MODEL, scale=0.3)
    expected, mistakes = expected_and_mistakes(m.state_dict(), x, s, eps=0.5)
    expect_close(
        m(x, s),
        expected,
        what="AddNorm(8, eps=0.5)(x, sublayer_output)",
        atol=1e-5,
        mistakes=mistakes,
    )


def test_dropout_is_off_in_eval(learner, rng):
    """AddNorm(8, dropout=0.5) in eval mode is exact: LayerNorm(x + sublayer_output)"""
    m = add_norm(learner, rng, dropout=0.5)
    x, s = tensor(rng, 2, 4, D_MODEL), tensor(rng, 2, 4, D_MODEL)
    got = m(x, s)
    what = "AddNorm(8, dropout=0.5)(x, sublayer_output) in eval mode"
    expect_shape(got, (2, 4, D_MODEL), what=what)
    state = m.state_dict()
    expected, catalogued = expected_and_mistakes(state, x, s)
    mistakes = Lazy(
        lambda: {**catalogued, **dropout_in_eval(dropout_patterns(got, state, x, s, p=0.5))}
    )
    expect_close(
        got,
        expected,
        what=what,
        atol=1e-5,
        mistakes=mistakes,
        hint="the expected value is self.norm(x + sublayer_output) with self.norm's own "
        "weights; a dropout must do nothing after .eval() (the nn.Dropout module does that)",
    )


def test_normalises_each_token_on_its_own(learner, rng):
    """changing one token changes only that token's output"""
    m = add_norm(learner, rng)
    x, s = tensor(rng, 1, 5, D_MODEL), tensor(rng, 1, 5, D_MODEL)
    changed = x.clone()
    changed[0, 3] = 10.0 * tensor(rng, D_MODEL)
    before, after = m(x, s), m(changed, s)
    for got in (before, after):
        expect_type(got, torch.Tensor, what="the output of AddNorm(x, sublayer_output)")
    keep = [0, 1, 2, 4]
    expect_close(
        after[:, keep],
        before[:, keep],
        what="the outputs of the other tokens after changing token 3",
        atol=1e-6,
        hint="another token changed these outputs, so your normalisation mixes tokens: "
        + mistake(NORM_WRONG_AXIS),
    )


def test_default_output_has_zero_mean_unit_std(learner, rng):
    """with a fresh AddNorm, each token's output has mean 0 and standard deviation 1"""
    m = learner.module("add_norm").AddNorm(D_MODEL)
    m.eval()
    x, s = tensor(rng, 2, 4, D_MODEL, scale=3.0), tensor(rng, 2, 4, D_MODEL, scale=3.0)
    got = m(x, s)
    what = "AddNorm(8)(x, sublayer_output)"
    expect_type(got, torch.Tensor, what=f"the output of {what}")
    # What each known mistake gives with the fresh LayerNorm (weight 1, bias 0), per statistic.
    fresh = {"norm.weight": torch.ones(D_MODEL), "norm.bias": torch.zeros(D_MODEL)}
    mistaken = expected_and_mistakes(fresh, x, s)[1]
    expect_close(
        got.mean(dim=-1),
        torch.zeros(2, 4),
        what=f"the mean over d_model of {what}",
        atol=1e-5,
        hint="normalise each token over its d_model features",
        mistakes=Lazy(lambda: per_token(mistaken, lambda y: y.mean(dim=-1))),
    )
    expect_close(
        got.std(dim=-1, unbiased=False),
        torch.ones(2, 4),
        what=f"the standard deviation over d_model of {what}",
        atol=1e-3,
        hint="divide each token by the standard deviation of its own d_model features",
        mistakes=Lazy(lambda: per_token(mistaken, lambda y: y.std(dim=-1, unbiased=False))),
    )


def per_token(mistaken: Mapping, statistic) -> dict:
    """{sentence: AnyOf(statistic of each output that mistake can give)}."""
    return {
        sentence: AnyOf(*(statistic(y) for y in outputs.arrays))
        for sentence, outputs in mistaken.items()
    }


TRAIN_CALL = f"AddNorm({D_MODEL}, dropout={P})"
DROPOUT_ON_X = (
    "{what} with a zero sublayer_output in train mode is not LayerNorm(x): the dropout touched "
    "x too. Drop entries of the sublayer output only: norm(x + dropout(sublayer_output))."
)
DROPOUT_UNUSED = (
    "{what} in train mode gives its eval-mode output: no dropout is applied. Apply "
    "self.dropout (an nn.Dropout(dropout), active after .train()) to sublayer_output."
)
DROPOUT_ELSEWHERE = (
    "{what} in train mode is not norm(x + dropout(sublayer_output)) for any choice of dropped "
    "entries (the kept ones scaled by 1/(1 - p)): apply self.dropout to sublayer_output only, "
    "before the addition."
)


def test_dropout_in_train_mode(learner, rng):
    """in train mode, dropout drops entries of the sublayer output only, before the addition"""
    m = add_norm(learner, rng, dropout=P)  # in eval mode
    state = m.state_dict()
    x, s = tensor(rng, 3, 4, D_MODEL), tensor(rng, 3, 4, D_MODEL)
    what = f"{TRAIN_CALL}(x, sublayer_output) with both (3, 4, {D_MODEL})"
    in_eval = m(x, s)
    expect_type(in_eval, torch.Tensor, what=what)
    expect_shape(in_eval, tuple(x.shape), what=what)
    eval_expected, catalogued = expected_and_mistakes(state, x, s)
    expect_close(
        in_eval,
        eval_expected,
        what=f"{what} in eval mode",
        atol=1e-5,
        mistakes=Lazy(
            lambda: {**catalogued, **dropout_in_eval(dropout_patterns(in_eval, state, x, s, p=P))}
        ),
        hint=EVAL_FIRST,
    )
    m.train()
    zero = m(x, torch.zeros_like(x))
    expect_type(zero, torch.Tensor, what=what)
    expect_shape(zero, tuple(x.shape), what=what)
    expected = expected_and_mistakes(state, x, torch.zeros_like(x))[0]
    # Eval mode is right (above): with nothing to drop, only a dropout of x changes the output.
    close = bool(torch.allclose(zero.double(), expected.double(), atol=1e-5))
    expect(close, DROPOUT_ON_X.format(what=what))
    got = m(x, s)
    expect_type(got, torch.Tensor, what=what)
    expect_shape(got, tuple(x.shape), what=what)
    found = dropout_patterns(got, state, x, s, p=P)
    if found is None and dropout_patterns(got, state, x, s, p=DEFAULT_P) is not None:
        raise GradingFailure(IGNORED_P.format(what=what, p=P))
    if found is None:
        unused = bool(torch.allclose(got.double(), eval_expected.double(), atol=1e-5))
        raise GradingFailure((DROPOUT_UNUSED if unused else DROPOUT_ELSEWHERE).format(what=what))
    expect(not bool(found[1].all()), DROPOUT_UNUSED.format(what=what))
