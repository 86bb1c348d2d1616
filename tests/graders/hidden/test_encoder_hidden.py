"""Hidden graders for t101/encoder.py: the wiring at other sizes, with per-batch masks and
deeper stacks, always with known-good stand-ins for the parts the encoder builds on
(support.standins, support.wiring), so a mistake in another component never costs points here."""

from __future__ import annotations

import pytest
import torch

from tests.graders.support import wiring
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

D_MODEL, HEADS, D_FF = 12, 3, 20
LAYER_CALL = "EncoderLayer(12, 3, 20)"


@pytest.fixture
def encoder_module(learner, request):
    record_replaced(request, learner)
    return learner.module("encoder")


def test_layer_submodules_other_sizes(encoder_module, learner):
    """EncoderLayer(12, 3, 20) has the four contract sublayers and nothing else"""
    layer = encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF)
    names = wiring.layer_parameters(learner, D_MODEL, HEADS, D_FF)
    expect_names(learner, layer, names, what=LAYER_CALL)


@WIRING
@pytest.mark.weight(3)
def test_layer_wiring_with_per_batch_mask(encoder_module, learner, rng):
    """EncoderLayer(x, mask) with a (B, L, L) mask is wired as the contract says"""
    layer, parts = layer_with_standins(
        learner, encoder_module, rng, D_MODEL, HEADS, D_FF, call=LAYER_CALL
    )
    x, mask = tensor(rng, 3, 6, D_MODEL), torch.from_numpy(key_mask(rng, 3, 6, 6))
    what = f"{LAYER_CALL}(x, mask) with x (3, 6, 12) and mask (3, 6, 6)"
    wiring.expect_layer_wiring(layer, parts, x, mask, what=what)


@WIRING
def test_layer_dropout_off_in_eval(encoder_module, learner, rng):
    """EncoderLayer(12, 3, 20, dropout=0.5) in eval mode is wired as the contract says"""
    call = "EncoderLayer(12, 3, 20, dropout=0.5)"
    layer, parts = layer_with_standins(
        learner, encoder_module, rng, D_MODEL, HEADS, D_FF, 0.5, call=call
    )
    x = tensor(rng, 2, 4, D_MODEL)
    wiring.expect_layer_wiring(layer, parts, x, what=f"{call}(x) in eval mode")


def test_stack_of_four_is_independent(encoder_module, learner):
    """Encoder(4, 12, 3, 20).layers holds four separate EncoderLayers"""
    call = "Encoder(4, 12, 3, 20)"
    encoder = encoder_module.Encoder(4, D_MODEL, HEADS, D_FF)
    names = wiring.layer_parameters(learner, D_MODEL, HEADS, D_FF)
    wiring.expect_separate_layers(learner, encoder, 4, names, what=call)


@WIRING
@pytest.mark.weight(3)
def test_stack_of_four_with_per_batch_mask(encoder_module, learner, rng):
    """Encoder(4, ...)(x, mask) applies its four layers in order with a (B, L, L) mask"""
    call = "Encoder(4, 12, 3, 20)"
    encoder, layers = stack_with_standins(
        learner, encoder_module, rng, 4, D_MODEL, HEADS, D_FF, call=call
    )
    x, mask = tensor(rng, 2, 5, D_MODEL), torch.from_numpy(key_mask(rng, 2, 5, 5))
    what = f"{call}(x, mask) with x (2, 5, 12) and mask (2, 5, 5)"
    wiring.expect_stack_wiring(encoder, layers, x, mask, what=what)


@WIRING
def test_single_layer_stack(encoder_module, learner, rng):
    """Encoder(1, ...) equals its one layer"""
    call = "Encoder(1, 12, 3, 20)"
    encoder, layers = stack_with_standins(
        learner, encoder_module, rng, 1, D_MODEL, HEADS, D_FF, call=call
    )
    wiring.expect_stack_wiring(encoder, layers, tensor(rng, 2, 3, D_MODEL), what=f"{call}(x)")


@WIRING
def test_stack_gradients_with_mask(encoder_module, learner, rng):
    """gradients reach every parameter of Encoder(3, ...) called with a mask"""
    call = "Encoder(3, 12, 3, 20)"
    encoder, layers = stack_with_standins(
        learner, encoder_module, rng, 3, D_MODEL, HEADS, D_FF, call=call
    )
    x, mask = tensor(rng, 2, 4, D_MODEL), torch.from_numpy(key_mask(rng, 4, 4))
    what = f"{call}(x, mask)"
    with forward_first(lambda: wiring.expect_stack_wiring(encoder, layers, x, mask, what=what)):
        expect_gradients(learner, encoder, x, mask, cotangent=tensor(rng, 2, 4, D_MODEL), what=what)
