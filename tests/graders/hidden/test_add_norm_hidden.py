"""Hidden graders for t101/add_norm.py: other widths and shapes, eps, dropout in eval mode,
gradients, compared with the reference loaded with the learner's own LayerNorm weights."""

from __future__ import annotations

import pytest
import torch

from autograder.feedback import Lazy, expect, expect_close, expect_type
from tests.graders.hidden.oracles import expect_grads_match, reference_grads
from tests.graders.support.add_norm_mistakes import (
    DEFAULT_EPS,
    EPS_IGNORED,
    dropout_in_eval,
    dropout_patterns,
    expected_and_mistakes,
)
from tests.graders.support.add_norm_params import norm_eps, norm_names, seeded_norm_state
from tests.graders.support.catalogue import mistake
from tests.graders.support.inputs import tensor
from tests.graders.support.params import forward_first

pytestmark = pytest.mark.add_norm

D_MODEL = 16


def pair(learner, reference, rng, **kwargs):
    """The learner's AddNorm(16, **kwargs) with seeded weights, the reference likewise, and
    those weights (under the contract's names; a LayerNorm class of the learner's own gets them
    under its own, support.add_norm_params)."""
    m = learner.module("add_norm").AddNorm(D_MODEL, **kwargs)
    names = norm_names(learner, m, D_MODEL, what=f"AddNorm({D_MODEL})")
    own, state = seeded_norm_state(rng, names, D_MODEL)
    learner.chain(m, [("load_state_dict", (own,), {}), ("eval", (), {})])  # one round trip
    return m, reference.build("add_norm", "AddNorm", D_MODEL, state=state, **kwargs), state


@pytest.mark.weight(2)
def test_four_dimensional_input(learner, reference, rng):
    """equals the reference on (B, h, L, d_model) inputs"""
    m, ref, state = pair(learner, reference, rng)
    x, s = tensor(rng, 2, 3, 4, D_MODEL), tensor(rng, 2, 3, 4, D_MODEL, scale=2.0)
    with torch.no_grad():
        expected = ref(x, s)
    got = m(x, s)
    expect_close(
        got,
        expected,
        what="AddNorm(16)(x, sublayer_output) with both (2, 3, 4, 16)",
        atol=1e-5,
        mistakes=expected_and_mistakes(state, x, s, got=got)[1],
    )


@pytest.mark.parametrize("eps", [1e-3, 2.0], ids=["eps=0.001", "eps=2"])
def test_eps_reaches_the_layer_norm(learner, reference, rng, eps):
    """AddNorm(16, eps=eps) builds nn.LayerNorm(16, eps=eps) and uses it"""
    m, ref, state = pair(learner, reference, rng, eps=eps)
    x, s = tensor(rng, 3, D_MODEL, scale=0.5), tensor(rng, 3, D_MODEL, scale=0.5)
    with torch.no_grad():
        expected = ref(x, s)
    got = m(x, s)
    expect_close(
        got,
        expected,
        what=f"AddNorm(16, eps={eps})(x, sublayer_output)",
        atol=1e-5,
        mistakes=expected_and_mistakes(state, x, s, eps, got=got)[1],
    )
    names = norm_names(learner, m, D_MODEL, what=f"AddNorm({D_MODEL})")
    kept = norm_eps(m, names)  # right numbers from a LayerNorm without .eps are right
    named = f" {mistake(EPS_IGNORED)}" if kept == DEFAULT_EPS else ""
    expect(
        kept in (None, eps),
        "AddNorm(d_model, eps=eps).norm must be nn.LayerNorm(d_model, eps=eps), with the eps "
        f"it was given.{named}",
    )


def test_dropout_is_off_in_eval(learner, reference, rng):
    """AddNorm(16, dropout=0.5) in eval mode equals the reference"""
    m, ref, state = pair(learner, reference, rng, dropout=0.5)
    x, s = tensor(rng, 2, 5, D_MODEL), tensor(rng, 2, 5, D_MODEL)
    with torch.no_grad():
        expected = ref(x, s)
    got = m(x, s)
    what = "AddNorm(16, dropout=0.5)(x, sublayer_output) in eval mode"
    expect_type(got, torch.Tensor, what=f"the output of {what}")
    catalogued = expected_and_mistakes(state, x, s, got=got)[1]
    mistakes = Lazy(
        lambda: {**catalogued, **dropout_in_eval(dropout_patterns(got, state, x, s, p=0.5))}
    )
    expect_close(
        got,
        expected,
        what="AddNorm(16, dropout=0.5)(x, sublayer_output) in eval mode",
        atol=1e-5,
        mistakes=mistakes,
    )


@pytest.mark.weight(2)
def test_gradients_match_reference(learner, reference, rng):
    """gradients of the LayerNorm's weight and bias equal the reference's"""
    m, ref, state = pair(learner, reference, rng)
    names = norm_names(learner, m, D_MODEL, what=f"AddNorm({D_MODEL})")
    x, s, g = (tensor(rng, 2, 4, D_MODEL) for _ in range(3))
    what = "AddNorm(16)(x, sublayer_output)"

    def forward():  # a wrong gradient is explained by the forward pass, when that differs
        with torch.no_grad():
            expected = ref(x, s)
        got = m(x, s)
        mistakes = expected_and_mistakes(state, x, s, got=got)[1]
        expect_close(got, expected, what=what, atol=1e-5, mistakes=mistakes)

    with forward_first(forward):
        grads = learner.parameter_grads(m, x, s, cotangent=g)
        contract = {names.weight: "norm.weight", names.bias: "norm.bias"}
        expect_grads_match(
            {contract.get(name, name): grad for name, grad in grads.items()},
            reference_grads(ref, x, s, cotangent=g),
            what=what,
            atol=1e-4,
        )


def test_inputs_not_modified(learner, reference, rng):
    """does not modify x or sublayer_output"""
    m, _, _ = pair(learner, reference, rng)
    x, s = tensor(rng, 2, 3, D_MODEL), tensor(rng, 2, 3, D_MODEL)
    call = m.call(x.clone(), s.clone())
    for name, before, after in zip(("x", "sublayer_output"), (x, s), call.args, strict=True):
        expect_close(
            after,
            before,
            what=f"{name} after AddNorm(16)(x, sublayer_output)",
            atol=0,
            hint="compute x + sublayer_output as a new tensor (no +=)",
        )
