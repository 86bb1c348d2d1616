"""Hidden graders for t101/encoder.py: the wiring at other sizes, with per-batch masks and
deeper stacks, always rebuilt from the learner's OWN sublayers and layers (support.wiring), so a
mistake in another component never costs points here."""

from __future__ import annotations

import pytest
import torch

from autograder.feedback import expect_close
from tests.graders.support import wiring
from tests.graders.support.inputs import key_mask, like_state, tensor
from tests.graders.support.params import expect_gradients, expect_independent_layers, expect_names

pytestmark = pytest.mark.encoder

D_MODEL, HEADS, D_FF = 12, 3, 20
LAYER_CALL = "EncoderLayer(12, 3, 20)"


def seeded(module, rng):
    module.load_state_dict(like_state(rng, module.state_dict()))
    module.eval()
    return module


@pytest.fixture
def encoder_module(learner):
    return learner.module("encoder")


def test_layer_submodules_other_sizes(encoder_module, learner):
    """EncoderLayer(12, 3, 20) has the four contract sublayers and nothing else"""
    layer = encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF)
    expect_names(learner, layer, wiring.LAYER_PARAMETERS, what=LAYER_CALL)


@pytest.mark.weight(3)
def test_layer_wiring_with_per_batch_mask(encoder_module, rng):
    """EncoderLayer(x, mask) with a (B, L, L) mask is wired as the contract says"""
    layer = seeded(encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF), rng)
    x, mask = tensor(rng, 3, 6, D_MODEL), torch.from_numpy(key_mask(rng, 3, 6, 6))
    what = f"{LAYER_CALL}(x, mask) with x (3, 6, 12) and mask (3, 6, 6)"
    wiring.expect_layer_wiring(layer, x, mask, what=what)


def test_layer_dropout_off_in_eval(encoder_module, rng):
    """EncoderLayer(12, 3, 20, dropout=0.5) in eval mode is wired as the contract says"""
    layer = seeded(encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF, 0.5), rng)
    x = tensor(rng, 2, 4, D_MODEL)
    wiring.expect_layer_wiring(
        layer, x, what="EncoderLayer(12, 3, 20, dropout=0.5)(x) in eval mode"
    )


def test_stack_of_four_is_independent(encoder_module, learner):
    """Encoder(4, 12, 3, 20).layers holds four separate EncoderLayers"""
    encoder = encoder_module.Encoder(4, D_MODEL, HEADS, D_FF)
    expect_independent_layers(
        learner, encoder, 4, wiring.LAYER_PARAMETERS, what="Encoder(4, 12, 3, 20)"
    )


@pytest.mark.weight(3)
def test_stack_of_four_with_per_batch_mask(encoder_module, rng):
    """Encoder(4, ...)(x, mask) applies its own four layers in order with a (B, L, L) mask"""
    encoder = seeded(encoder_module.Encoder(4, D_MODEL, HEADS, D_FF), rng)
    x, mask = tensor(rng, 2, 5, D_MODEL), torch.from_numpy(key_mask(rng, 2, 5, 5))
    what = "Encoder(4, 12, 3, 20)(x, mask) with x (2, 5, 12) and mask (2, 5, 5)"
    wiring.expect_stack_wiring(encoder, 4, x, mask, what=what)


def test_single_layer_stack(encoder_module, rng):
    """Encoder(1, ...) equals its one layer"""
    encoder = seeded(encoder_module.Encoder(1, D_MODEL, HEADS, D_FF), rng)
    x = tensor(rng, 2, 3, D_MODEL)
    expected = encoder.layers[0](x)
    expect_close(
        encoder(x),
        expected,
        what="Encoder(1, 12, 3, 20)(x)",
        atol=1e-6,
        hint=wiring.STACK_HINT,
    )


def test_stack_gradients_with_mask(encoder_module, learner, rng):
    """gradients reach every parameter of Encoder(3, ...) called with a mask"""
    encoder = seeded(encoder_module.Encoder(3, D_MODEL, HEADS, D_FF), rng)
    x, mask = tensor(rng, 2, 4, D_MODEL), torch.from_numpy(key_mask(rng, 4, 4))
    expect_gradients(
        learner,
        encoder,
        x,
        mask,
        cotangent=tensor(rng, 2, 4, D_MODEL),
        what="Encoder(3, 12, 3, 20)(x, mask)",
    )
