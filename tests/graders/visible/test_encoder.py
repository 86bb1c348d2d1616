"""Visible graders for t101/encoder.py: EncoderLayer and Encoder.

The expected outputs are rebuilt from the learner's OWN sublayers and layers
(support.wiring), so only the wiring is graded here: a mistake inside MultiHeadAttention,
PositionwiseFeedForward or AddNorm costs points in that component alone.
Symbols: B batch, L tokens, d_model width, h heads, d_ff inner width.
"""

from __future__ import annotations

import pytest
import torch

from tests.graders.support import wiring
from tests.graders.support.inputs import key_mask, like_state, tensor
from tests.graders.support.params import expect_gradients, expect_independent_layers, expect_names

pytestmark = pytest.mark.encoder

D_MODEL, HEADS, D_FF, LAYERS = 8, 2, 16, 3
LAYER_CALL = "EncoderLayer(8, 2, 16)"
STACK_CALL = "Encoder(3, 8, 2, 16)"


@pytest.fixture
def encoder_module(learner):
    return learner.module("encoder")


def seeded(module, rng):
    """Load seeded weights (LayerNorms away from identity, so swapped norms show) and eval()."""
    module.load_state_dict(like_state(rng, module.state_dict()))
    module.eval()
    return module


def test_layer_submodules(encoder_module, learner):
    """EncoderLayer has self_attn, add_norm_1, feed_forward and add_norm_2"""
    layer = encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF)
    expect_names(
        learner,
        layer,
        wiring.LAYER_PARAMETERS,
        what=LAYER_CALL,
        hint="create self.self_attn = MultiHeadAttention(d_model, num_heads, dropout), "
        "self.add_norm_1 = AddNorm(d_model, dropout), self.feed_forward = "
        "PositionwiseFeedForward(d_model, d_ff, dropout), self.add_norm_2 = "
        "AddNorm(d_model, dropout)",
    )


@pytest.mark.weight(3)
def test_layer_wires_its_sublayers(encoder_module, rng):
    """EncoderLayer(x) = add_norm_2(x2, feed_forward(x2)), x2 = add_norm_1(x, self_attn(x, x, x))"""
    layer = seeded(encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF), rng)
    x = tensor(rng, 2, 5, D_MODEL)
    wiring.expect_layer_wiring(layer, x, what=f"{LAYER_CALL}(x) with x (2, 5, 8)")


@pytest.mark.weight(2)
def test_layer_passes_mask(encoder_module, rng):
    """EncoderLayer(x, mask) hands the mask to its self-attention"""
    layer = seeded(encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF), rng)
    x, mask = tensor(rng, 2, 5, D_MODEL), torch.from_numpy(key_mask(rng, 2, 5, 5))
    what = f"{LAYER_CALL}(x, mask) with x (2, 5, 8) and mask (2, 5, 5)"
    wiring.expect_layer_wiring(layer, x, mask, what=what)


def test_layer_gradients_reach_every_parameter(encoder_module, learner, rng):
    """gradients reach every parameter of an EncoderLayer"""
    layer = seeded(encoder_module.EncoderLayer(D_MODEL, HEADS, D_FF), rng)
    x = tensor(rng, 2, 4, D_MODEL)
    expect_gradients(
        learner, layer, x, cotangent=tensor(rng, 2, 4, D_MODEL), what=f"{LAYER_CALL}(x)"
    )


def test_stack_has_independent_layers(encoder_module, learner):
    """Encoder.layers holds num_layers separate EncoderLayers (no shared parameters)"""
    encoder = encoder_module.Encoder(LAYERS, D_MODEL, HEADS, D_FF)
    expect_independent_layers(learner, encoder, LAYERS, wiring.LAYER_PARAMETERS, what=STACK_CALL)


@pytest.mark.weight(3)
def test_stack_applies_layers_in_order(encoder_module, rng):
    """Encoder(x, mask) applies its own layers in order, passing the mask"""
    encoder = seeded(encoder_module.Encoder(LAYERS, D_MODEL, HEADS, D_FF), rng)
    x, mask = tensor(rng, 2, 5, D_MODEL), torch.from_numpy(key_mask(rng, 5, 5))
    what = f"{STACK_CALL}(x, mask) with x (2, 5, 8) and mask (5, 5)"
    wiring.expect_stack_wiring(encoder, LAYERS, x, mask, what=what)


def test_stack_gradients_reach_every_parameter(encoder_module, learner, rng):
    """gradients reach every parameter of every layer of the Encoder"""
    encoder = seeded(encoder_module.Encoder(2, D_MODEL, HEADS, D_FF), rng)
    x = tensor(rng, 1, 4, D_MODEL)
    expect_gradients(
        learner, encoder, x, cotangent=tensor(rng, 1, 4, D_MODEL), what="Encoder(2, 8, 2, 16)(x)"
    )
