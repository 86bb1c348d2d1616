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
    DROPOUT_AFTER_NORM,
    DROPOUT_MISSING,
    EPS_IGNORED,
    NO_RESIDUAL,
    NORM_WRONG_AXIS,
    dropout_in_eval,
    dropout_patterns,
    expected_and_mistakes,
)
from tests.graders.support.add_norm_params import (
    fitted_eps,
    norm_eps,
    norm_names,
    seeded_norm_state,
    wrong_parameters,
)
from tests.graders.support.catalogue import mistake
from tests.graders.support.dropout import DEFAULT_P, EVAL_FIRST, IGNORED_P, P, fit
from tests.graders.support.inputs import tensor

pytestmark = pytest.mark.add_norm

D_MODEL = 8


def add_norm(learner, rng, eps=None, **kwargs):
    """A learner AddNorm(8, **kwargs) (with eps=eps when given) in eval mode with seeded
    LayerNorm weights, and those weights under the contract's names (norm.weight, norm.bias):
    a LayerNorm class of the learner's own gets them under its own names
    (support.add_norm_params)."""
    AddNorm = learner.module("add_norm").AddNorm
    m = AddNorm(D_MODEL, **kwargs) if eps is None else AddNorm(D_MODEL, eps=eps, **kwargs)
    names = norm_names(learner, m, D_MODEL, what="AddNorm(8)")
    own, state = seeded_norm_state(rng, names, D_MODEL)
    learner.chain(m, [("load_state_dict", (own,), {}), ("eval", (), {})])  # one round trip
    return m, state


def test_parameters(learner):
    """has one LayerNorm called norm, with weight and bias (d_model,)"""
    m = learner.module("add_norm").AddNorm(D_MODEL)
    got = [(p.name, tuple(p.shape)) for p in learner.parameters(m)]
    expected = [("norm.bias", (D_MODEL,)), ("norm.weight", (D_MODEL,))]
    expect(sorted(got) == expected, wrong_parameters(got, D_MODEL, what="AddNorm(8)"))


@pytest.mark.weight(3)
@pytest.mark.parametrize("shape", [(5, D_MODEL), (2, 5, D_MODEL)], ids=["2d", "3d"])
def test_equals_layer_norm_of_sum(learner, rng, shape):
    """equals LayerNorm(x + sublayer_output) (post-norm)"""
    m, state = add_norm(learner, rng)
    x, s = tensor(rng, *shape), tensor(rng, *shape)
    what = f"AddNorm(8)(x, sublayer_output) with both {shape}"
    got = m(x, s)
    expect_shape(got, shape, what=what)
    expected, mistakes = expected_and_mistakes(state, x, s, got=got)
    expect_close(got, expected, what=what, atol=1e-5, mistakes=mistakes)


EPS_NOT_KEPT = "AddNorm(8, eps=0.5).norm.eps is {eps!r}; expected 0.5. {fix}"


def test_eps_is_passed_to_layer_norm(learner, rng):
    """eps reaches the LayerNorm: AddNorm(8, eps=0.5)"""
    m, state = add_norm(learner, rng, eps=0.5)
    x, s = tensor(rng, 3, D_MODEL, scale=0.3), tensor(rng, 3, D_MODEL, scale=0.3)
    got = m(x, s)
    expected, mistakes = expected_and_mistakes(state, x, s, eps=0.5, got=got)
    expect_close(
        got, expected, what="AddNorm(8, eps=0.5)(x, sublayer_output)", atol=1e-5, mistakes=mistakes
    )
    names = norm_names(learner, m, D_MODEL, what="AddNorm(8, eps=0.5)")
    eps = norm_eps(m, names)  # right numbers from a LayerNorm without .eps are right
    fix = (
        mistake(EPS_IGNORED)
        if eps == DEFAULT_EPS
        else "Hint: create self.norm = nn.LayerNorm(d_model, eps=eps)."
    )
    expect(eps in (None, 0.5), EPS_NOT_KEPT.format(eps=eps, fix=fix))


def test_dropout_is_off_in_eval(learner, rng):
    """AddNorm(8, dropout=0.5) in eval mode is exact: LayerNorm(x + sublayer_output)"""
    m, state = add_norm(learner, rng, dropout=0.5)
    x, s = tensor(rng, 2, 4, D_MODEL), tensor(rng, 2, 4, D_MODEL)
    got = m(x, s)
    what = "AddNorm(8, dropout=0.5)(x, sublayer_output) in eval mode"
    expect_shape(got, (2, 4, D_MODEL), what=what)
    expected, catalogued = expected_and_mistakes(state, x, s, got=got)
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
    m, _ = add_norm(learner, rng)
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
    expect(  # an output that ignores its input keeps the other tokens too
        not torch.allclose(after[:, 3], before[:, 3], atol=1e-6),
        "The output of token 3 did not change when token 3 of x did, so the output does not "
        "use x: " + mistake(NO_RESIDUAL),
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
    "{what} with a zero sublayer_output gives another output in train mode than in eval mode: "
    "the dropout touched x too. Drop entries of the sublayer output only: "
    "norm(x + dropout(sublayer_output))."
)
DROPOUT_UNUSED = (
    "{what} in train mode gives its eval-mode output: no dropout is applied. "
    + mistake(DROPOUT_MISSING)
)
DROPOUT_ELSEWHERE = (
    "{what} in train mode is not norm(x + dropout(sublayer_output)) for any choice of dropped "
    "entries (the kept ones scaled by 1/(1 - p)): apply self.dropout to sublayer_output only, "
    "before the addition."
)


def test_dropout_in_train_mode(learner, rng):
    """in train mode, dropout drops entries of the sublayer output only, before the addition"""
    m, state = add_norm(learner, rng, dropout=P)  # in eval mode
    x, s = tensor(rng, 3, 4, D_MODEL), tensor(rng, 3, 4, D_MODEL)
    zero = torch.zeros_like(x)
    what = f"{TRAIN_CALL}(x, sublayer_output) with both (3, 4, {D_MODEL})"
    in_eval, zero_in_eval = m(x, s), m(x, zero)
    for got in (in_eval, zero_in_eval):
        expect_type(got, torch.Tensor, what=what)
        expect_shape(got, tuple(x.shape), what=what)
    eval_expected, catalogued = expected_and_mistakes(state, x, s, got=in_eval)
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
    eps = fitted_eps(in_eval, state, x, s, atol=1e-5) or DEFAULT_EPS  # the eps its norm uses
    m.train()
    # With nothing to drop, the train-mode output is the eval-mode one, unless a dropout acts on
    # x (or on the normalised sum, whose dropped entries are then 0).
    zero_in_train = m(x, zero)
    expect_type(zero_in_train, torch.Tensor, what=what)
    if not _close(zero_in_train, zero_in_eval):
        after_norm = fit(zero_in_train, torch.zeros(()), zero_in_eval / (1 - P), atol=1e-5)
        if after_norm.dropout_seen:
            raise GradingFailure(f"In train mode, {what}: {mistake(DROPOUT_AFTER_NORM)}")
        raise GradingFailure(DROPOUT_ON_X.format(what=what))
    got = m(x, s)
    expect_type(got, torch.Tensor, what=what)
    expect_shape(got, tuple(x.shape), what=what)
    found = dropout_patterns(got, state, x, s, p=P, eps=eps)
    if found is None and dropout_patterns(got, state, x, s, p=DEFAULT_P, eps=eps) is not None:
        raise GradingFailure(IGNORED_P.format(what=what, p=P))
    if found is None:
        unused = _close(got, in_eval)
        raise GradingFailure((DROPOUT_UNUSED if unused else DROPOUT_ELSEWHERE).format(what=what))
    expect(not bool(found[1].all()), DROPOUT_UNUSED.format(what=what))


def _close(got: torch.Tensor, expected: torch.Tensor) -> bool:
    same_shape = tuple(got.shape) == tuple(expected.shape)
    return same_shape and bool(torch.allclose(got.double(), expected.double(), atol=1e-5))
