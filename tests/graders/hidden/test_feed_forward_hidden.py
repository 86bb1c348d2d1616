"""Hidden graders for t101/feed_forward.py: other widths, 1-D and 4-D inputs, dropout in eval
mode, gradients, compared with the reference loaded with the learner's own weights."""

from __future__ import annotations

import pytest
import torch

from autograder.feedback import expect_close, expect_shape
from tests.graders.hidden.oracles import expect_grads_match, reference_grads
from tests.graders.support.ffn_mistakes import expected_and_mistakes, parameter_mistakes
from tests.graders.support.inputs import tensor
from tests.graders.support.params import (
    expect_gradients,
    expect_parameters,
    forward_first,
    linear_parameters,
    seeded_state,
)

pytestmark = pytest.mark.feed_forward

D_MODEL, D_FF = 12, 40
PARAMETERS = linear_parameters({"W_1": (D_FF, D_MODEL), "W_2": (D_MODEL, D_FF)}, bias=True)


def pair(learner, reference, rng, dropout=0.0):
    """The learner's module with seeded weights, the reference with the same weights, and
    those weights."""
    m = learner.module("feed_forward").PositionwiseFeedForward(D_MODEL, D_FF, dropout)
    state = seeded_state(
        learner,
        m,
        rng,
        PARAMETERS,
        what="PositionwiseFeedForward(12, 40)",
        named=parameter_mistakes,
    )
    learner.chain(m, [("load_state_dict", (state,), {}), ("eval", (), {})])  # one round trip
    ref = reference.build("feed_forward", "PositionwiseFeedForward", D_MODEL, D_FF, state=state)
    return m, ref, state


def test_parameters_other_widths(learner):
    """PositionwiseFeedForward(12, 40) has W_1 (40, 12) and W_2 (12, 40) with biases"""
    m = learner.module("feed_forward").PositionwiseFeedForward(D_MODEL, D_FF)
    expect_parameters(
        learner, m, PARAMETERS, what="PositionwiseFeedForward(12, 40)", named=parameter_mistakes
    )


@pytest.mark.weight(2)
@pytest.mark.parametrize("shape", [(D_MODEL,), (2, 3, 4, D_MODEL)], ids=["1d", "4d"])
def test_any_leading_axes(learner, reference, rng, shape):
    """works on (d_model,) and (B, h, L, d_model) inputs: equals the reference"""
    m, ref, state = pair(learner, reference, rng)
    x = tensor(rng, *shape)
    what = f"PositionwiseFeedForward(12, 40)(x) with x {shape}"
    got = m(x)
    expect_shape(got, shape, what=what, hint="nn.Linear acts on the last axis of any shape")
    with torch.no_grad():
        expected = ref(x)
    mistakes = expected_and_mistakes(state, x)[1]
    expect_close(got, expected, what=what, atol=1e-5, mistakes=mistakes)


def test_dropout_is_off_in_eval(learner, reference, rng):
    """PositionwiseFeedForward(12, 40, dropout=0.5) in eval mode equals the reference"""
    m, ref, state = pair(learner, reference, rng, dropout=0.5)
    x = tensor(rng, 2, 5, D_MODEL)
    with torch.no_grad():
        expected = ref(x)
    expect_close(
        m(x),
        expected,
        atol=1e-5,
        what="PositionwiseFeedForward(12, 40, dropout=0.5)(x) in eval mode",
        mistakes=expected_and_mistakes(state, x)[1],
    )


@pytest.mark.weight(2)
def test_gradients_match_reference(learner, reference, rng):
    """gradients of W_1 and W_2 equal the reference's"""
    m, ref, state = pair(learner, reference, rng)
    x, g = tensor(rng, 3, 4, D_MODEL), tensor(rng, 3, 4, D_MODEL)
    what = "PositionwiseFeedForward(12, 40)(x) with x (3, 4, 12)"

    def forward():  # a wrong gradient is explained by the forward pass, when that differs
        with torch.no_grad():
            expected = ref(x)
        mistakes = expected_and_mistakes(state, x)[1]
        expect_close(m(x), expected, what=what, atol=1e-5, mistakes=mistakes)

    with forward_first(forward):
        expect_gradients(learner, m, x, cotangent=g, what=what)
        expect_grads_match(
            learner.parameter_grads(m, x, cotangent=g),
            reference_grads(ref, x, cotangent=g),
            what=what,
            atol=1e-4,
        )


def test_input_not_modified(learner, reference, rng):
    """does not modify its input"""
    m, _, _ = pair(learner, reference, rng)
    x = tensor(rng, 2, 3, D_MODEL)
    call = m.call(x.clone())
    expect_close(
        call.args[0],
        x,
        what="x after PositionwiseFeedForward(12, 40)(x)",
        atol=0,
        hint="do not use in-place operations (relu_, +=) on x",
    )
