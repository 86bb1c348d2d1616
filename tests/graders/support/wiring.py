"""The encoder's wiring, rebuilt from the learner's OWN sublayers.

An EncoderLayer is graded on how it connects its sublayers, not on the sublayers themselves: the
expected output calls the learner's own `self_attn`, `add_norm_1`, `feed_forward` and
`add_norm_2` remotely, in the contract's order. A mistake inside MultiHeadAttention,
PositionwiseFeedForward or AddNorm therefore costs points only in that component. The same holds
for Encoder, rebuilt from the learner's own layers.

Each `*_mistakes` function rebuilds what a common wiring mistake would return, also from the
learner's own sublayers, keyed by the sentence that names it.
Symbols: B batch, L tokens, d_model width.
"""

from __future__ import annotations

import torch

from autograder.feedback import expect_close, expect_shape

#: The parameter names of a contract EncoderLayer, sublayer by sublayer.
LAYER_PARAMETERS = [
    *(f"self_attn.W_{p}.{kind}" for p in "qkvo" for kind in ("weight", "bias")),
    "add_norm_1.norm.weight",
    "add_norm_1.norm.bias",
    *(f"feed_forward.W_{i}.{kind}" for i in (1, 2) for kind in ("weight", "bias")),
    "add_norm_2.norm.weight",
    "add_norm_2.norm.bias",
]

MASK_DROPPED = (
    "the mask does not reach the self-attention: call self.self_attn(x, x, x, mask) with the "
    "layer's mask"
)
SECOND_RESIDUAL_FROM_INPUT = (
    "the second Add & Norm adds the layer's input x; its residual is x2, the output of the first "
    "Add & Norm: add_norm_2(x2, feed_forward(x2))"
)
FEED_FORWARD_ON_INPUT = (
    "the feed-forward reads the layer's input x; it must read x2, the output of the first "
    "Add & Norm: feed_forward(x2)"
)
NORMS_SWAPPED = (
    "add_norm_1 and add_norm_2 are swapped: add_norm_1 follows the self-attention, add_norm_2 "
    "follows the feed-forward"
)
FEED_FORWARD_SKIPPED = (
    "the layer returns x2, the output of the first Add & Norm; it must go on with "
    "add_norm_2(x2, feed_forward(x2))"
)
FIRST_ADD_NORM_SKIPPED = (
    "the first Add & Norm is missing: x2 = add_norm_1(x, self_attn(x, x, x, mask)[0]) comes "
    "before the feed-forward"
)
LAYER_HINT = (
    "an EncoderLayer computes x2 = add_norm_1(x, self_attn(x, x, x, mask)[0]), then returns "
    "add_norm_2(x2, feed_forward(x2))"
)

ONLY_LAST_LAYER = (
    "only the last layer's output is returned: each layer must read the previous layer's "
    "output (x = layer(x, mask)), not the encoder's input"
)
ONLY_FIRST_LAYER = "only the first layer is applied; apply every layer in self.layers, in order"
LAYERS_REVERSED = "the layers run in reverse order; apply self.layers from first to last"
STACK_MASK_DROPPED = "the mask does not reach the layers: call each layer as layer(x, mask)"
STACK_HINT = "an Encoder applies its layers in order: for layer in self.layers: x = layer(x, mask)"


def layer_forward(layer, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """The contract's EncoderLayer forward, calling the learner's own sublayers remotely."""
    return _layer_stages(layer, x, mask)[2]


def _layer_stages(layer, x, mask):
    """(attention output, x2, layer output), each from the learner's own sublayers."""
    attn, _ = layer.self_attn(x, x, x, mask)
    x2 = layer.add_norm_1(x, attn)
    return attn, x2, layer.add_norm_2(x2, layer.feed_forward(x2))


def layer_mistakes(layer, x: torch.Tensor, mask: torch.Tensor | None = None, stages=None) -> dict:
    """What each common EncoderLayer wiring mistake returns, from the learner's own sublayers
    (`stages`: the _layer_stages already computed for these inputs, if any)."""
    attn, x2, _ = stages or _layer_stages(layer, x, mask)
    found = {
        SECOND_RESIDUAL_FROM_INPUT: layer.add_norm_2(x, layer.feed_forward(x2)),
        FEED_FORWARD_ON_INPUT: layer.add_norm_2(x2, layer.feed_forward(x)),
        FEED_FORWARD_SKIPPED: x2,
        FIRST_ADD_NORM_SKIPPED: layer.add_norm_2(attn, layer.feed_forward(attn)),
    }
    swapped = layer.add_norm_2(x, attn)
    found[NORMS_SWAPPED] = layer.add_norm_1(swapped, layer.feed_forward(swapped))
    if mask is not None:
        found[MASK_DROPPED] = layer_forward(layer, x, None)
    return found


def expect_layer_wiring(layer, x: torch.Tensor, mask: torch.Tensor | None = None, *, what: str):
    """The learner's EncoderLayer output equals the contract's composition of its own sublayers.

    The expectation is computed first, so that a sublayer that fails or hangs is named by its own
    call (e.g. PositionwiseFeedForward.forward) rather than by EncoderLayer.forward.
    """
    stages = _layer_stages(layer, x, mask)
    mistakes = layer_mistakes(layer, x, mask, stages)
    got = layer(x) if mask is None else layer(x, mask)
    expect_shape(got, tuple(x.shape), what=what)
    expect_close(got, stages[2], what=what, atol=1e-5, hint=LAYER_HINT, mistakes=mistakes)


def encoder_layers(encoder, num_layers: int) -> list:
    """The learner's layers as remote objects: encoder.layers[0], ..., encoder.layers[n - 1]."""
    return [encoder.layers[i] for i in range(num_layers)]


def stack_forward(layers: list, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """The contract's Encoder forward: the learner's own layers applied in order."""
    for layer in layers:
        x = layer(x, mask)
    return x


def stack_mistakes(layers: list, x: torch.Tensor, mask: torch.Tensor | None = None) -> dict:
    """What each common Encoder wiring mistake returns, from the learner's own layers."""
    found = {
        ONLY_LAST_LAYER: layers[-1](x, mask),
        ONLY_FIRST_LAYER: layers[0](x, mask),
        LAYERS_REVERSED: stack_forward(layers[::-1], x, mask),
    }
    if mask is not None:
        found[STACK_MASK_DROPPED] = stack_forward(layers, x, None)
    return found


def expect_stack_wiring(encoder, num_layers: int, x: torch.Tensor, mask=None, *, what: str):
    """The learner's Encoder output equals its own layers applied in order (computed first)."""
    layers = encoder_layers(encoder, num_layers)
    expected, mistakes = stack_forward(layers, x, mask), stack_mistakes(layers, x, mask)
    got = encoder(x) if mask is None else encoder(x, mask)
    expect_shape(got, tuple(x.shape), what=what)
    expect_close(got, expected, what=what, atol=1e-5, hint=STACK_HINT, mistakes=mistakes)
