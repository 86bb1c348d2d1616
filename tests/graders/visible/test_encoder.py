"""Visible graders for t101/encoder.py: EncoderLayer and Encoder.

The wiring tests replace the learner's sublayers (and an Encoder's layers) by known-good
stand-ins made of torch's own modules (support.standins) and compare with the contract's
composition of the same stand-ins (support.wiring): a mistake inside MultiHeadAttention,
PositionwiseFeedForward or AddNorm, even one that raises, costs points in that component alone.
The structure tests (parameter names, separate layers) read the learner's own modules.
Symbols: B batch, L tokens, d_model width, h heads, d_ff inner width.
"""

from __future__ import annotations

import pytest
import torch

from autograder.feedback import expect
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support import wiring
from tests.graders.support.catalogue import mistake
from tests.graders.support.inputs import key_mask, tensor
from tests.graders.support.params import expect_gradients, expect_names, forward_first
from tests.graders.support.standins import (
    layer_with_standins,
    record_replaced,
    stack_with_standins,
)

# The wiring tests build on the sublayers (course.toml depends_on) unless stand-ins replace them
# (support.standins.record_replaced); the structure tests read names only: uses().
pytestmark = [pytest.mark.encoder, pytest.mark.uses()]
WIRING = pytest.mark.uses("multi_head_attention", "add_norm", "feed_forward")

D_MODEL, HEADS, D_FF, LAYERS = 8, 2, 16, 3
LAYER_CALL = "EncoderLayer(8, 2, 16)"
STACK_CALL = "Encoder(3, 8, 2, 16)"


@pytest.fixture
def encoder_module(learner, request):
    record_replaced(request, learner)
    return learner.module("encoder")


def test_layer_submodules(encoder_module, learner):
    """EncoderLayer has self_attn, add_norm_1, feed_forward and add_norm_2"""
    layer = encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF)
    expect_names(
        learner,
        layer,
        wiring.layer_parameters(learner, D_MODEL, HEADS, D_FF),
        what=LAYER_CALL,
        hint="create self.self_attn = MultiHeadAttention(d_model, num_heads, dropout), "
        "self.add_norm_1 = AddNorm(d_model, dropout), self.feed_forward = "
        "PositionwiseFeedForward(d_model, d_ff, dropout), self.add_norm_2 = "
        "AddNorm(d_model, dropout)",
    )


@WIRING
@pytest.mark.weight(3)
def test_layer_wires_its_sublayers(encoder_module, learner, rng):
    """EncoderLayer(x) = add_norm_2(x2, feed_forward(x2)), x2 = add_norm_1(x, self_attn(x, x, x))"""
    layer, parts = layer_with_standins(
        learner, encoder_module, rng, D_MODEL, HEADS, D_FF, call=LAYER_CALL
    )
    x = tensor(rng, 2, 5, D_MODEL)
    wiring.expect_layer_wiring(layer, parts, x, what=f"{LAYER_CALL}(x) with x (2, 5, 8)")


@WIRING
@pytest.mark.weight(2)
def test_layer_passes_mask(encoder_module, learner, rng):
    """EncoderLayer(x, mask) hands the mask to its self-attention"""
    layer, parts = layer_with_standins(
        learner, encoder_module, rng, D_MODEL, HEADS, D_FF, call=LAYER_CALL
    )
    x, mask = tensor(rng, 2, 5, D_MODEL), torch.from_numpy(key_mask(rng, 2, 5, 5))
    what = f"{LAYER_CALL}(x, mask) with x (2, 5, 8) and mask (2, 5, 5)"
    wiring.expect_layer_wiring(layer, parts, x, mask, what=what)


@WIRING
def test_layer_gradients_reach_every_parameter(encoder_module, learner, rng):
    """gradients reach every parameter of an EncoderLayer's sublayers"""
    layer, parts = layer_with_standins(
        learner, encoder_module, rng, D_MODEL, HEADS, D_FF, call=LAYER_CALL
    )
    x = tensor(rng, 2, 4, D_MODEL)
    what = f"{LAYER_CALL}(x)"
    with forward_first(lambda: wiring.expect_layer_wiring(layer, parts, x, what=what)):
        expect_gradients(learner, layer, x, cotangent=tensor(rng, 2, 4, D_MODEL), what=what)


def kept_dropout(sublayer) -> float | None:
    """The dropout probability a sublayer keeps in `.dropout`: an nn.Dropout's p, or the number
    itself (nanoGPT keeps the float and two nn.Dropout modules); None for anything else."""
    kept = sublayer.dropout
    value = kept if isinstance(kept, int | float) else getattr(kept, "p", None)
    return float(value) if isinstance(value, int | float) else None


SUBLAYER_DROPOUT_NOT_PASSED = "encoder/dropout-not-passed"
#: The second probability the dropout test builds an EncoderLayer with.
OTHER_P = 0.15
DROPOUT_NOT_PASSED = (
    "{what} gives its sublayers another dropout: {wrong}; expected {p:g} each. Pass dropout on "
    "to every sublayer, e.g. MultiHeadAttention(d_model, num_heads, dropout)."
)


def test_layer_gives_each_sublayer_its_dropout(encoder_module, learner):
    """EncoderLayer(..., dropout=p) builds each sublayer with dropout p (their .dropout.p)"""
    p, wrong = 0.3, []
    # Two probabilities: a sublayer whose default dropout is one of them (0.3) is told by the
    # other; a sublayer inside the layer that keeps no dropout while the class built alone with
    # p keeps p (nn.Identity at p=0) was given none (tests/hostile/test_encoder_dropout_evasion).
    for q in (p, OTHER_P):
        layer = encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF, q)
        for name, module, cls, arguments in wiring.SUBLAYERS:
            try:  # the sublayers' own contract: self.dropout = nn.Dropout(dropout)
                # What the learner's own class keeps of dropout=q: its own graders judge that.
                alone = getattr(learner.module(module), cls)(*arguments(D_MODEL, HEADS, D_FF), q)
                own = kept_dropout(alone)
            except LearnerError:
                continue  # a sublayer without one: its own graders say so, not this test
            if own is None:
                continue  # a dropout kept another way (two modules): nothing to compare
            try:
                sublayer = getattr(layer, name)
            except LearnerError:
                continue  # no such sublayer: test_layer_submodules says so, not this test
            try:  # the class keeps q when given it: inside the layer, no dropout is none given
                got = kept_dropout(sublayer)
            except LearnerError:
                got = None
            if got != own:
                kept = "no dropout" if got is None else f"{got!r}"
                told = f"{name}.dropout.p is {kept}" if got is not None else f"{name} keeps {kept}"
                wrong.append(told)
        if wrong:
            break
    what = f"EncoderLayer({D_MODEL}, {HEADS}, {D_FF}, dropout={q:g})"
    told = DROPOUT_NOT_PASSED.format(what=what, wrong=", ".join(wrong), p=q)
    expect(not wrong, f"{told} {mistake(SUBLAYER_DROPOUT_NOT_PASSED)}")


# Every EncoderLayer test runs before the stack's tests, which hand the learner's Encoder
# EncoderLayer stand-ins (tests/reference/test_standin_order.py).
def test_stack_has_independent_layers(encoder_module, learner):
    """Encoder.layers holds num_layers separate EncoderLayers (no shared parameters)"""
    encoder = encoder_module.Encoder(LAYERS, D_MODEL, HEADS, D_FF)
    names = wiring.layer_parameters(learner, D_MODEL, HEADS, D_FF)
    wiring.expect_separate_layers(learner, encoder, LAYERS, names, what=STACK_CALL)


@WIRING
@pytest.mark.weight(3)
def test_stack_applies_layers_in_order(encoder_module, learner, rng):
    """Encoder(x, mask) applies its layers in order, passing the mask"""
    encoder, layers = stack_with_standins(
        learner, encoder_module, rng, LAYERS, D_MODEL, HEADS, D_FF, call=STACK_CALL
    )
    x, mask = tensor(rng, 2, 5, D_MODEL), torch.from_numpy(key_mask(rng, 5, 5))
    what = f"{STACK_CALL}(x, mask) with x (2, 5, 8) and mask (5, 5)"
    wiring.expect_stack_wiring(encoder, layers, x, mask, what=what)


@WIRING
def test_stack_gradients_reach_every_parameter(encoder_module, learner, rng):
    """gradients reach every parameter of every layer of the Encoder"""
    call = "Encoder(2, 8, 2, 16)"
    encoder, layers = stack_with_standins(
        learner, encoder_module, rng, 2, D_MODEL, HEADS, D_FF, call=call
    )
    x, what = tensor(rng, 1, 4, D_MODEL), f"{call}(x)"
    with forward_first(lambda: wiring.expect_stack_wiring(encoder, layers, x, what=what)):
        expect_gradients(learner, encoder, x, cotangent=tensor(rng, 1, 4, D_MODEL), what=what)
