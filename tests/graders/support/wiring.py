"""The encoder's wiring, checked against known-good stand-ins for the parts it builds on.

An EncoderLayer is graded on how it connects its sublayers, not on the sublayers themselves:
support.standins replaces the learner's `self_attn`, `add_norm_1`, `feed_forward` and
`add_norm_2` by modules made of torch's own modules, and the expected output is the contract's
composition of the harness's twins of those stand-ins. A mistake inside MultiHeadAttention,
PositionwiseFeedForward or AddNorm, even one that raises or hangs, therefore costs points only
in that component. An Encoder is graded likewise, with nn.TransformerEncoderLayer stand-ins in
its `layers`.

Each `*_mistakes` function computes, from the same twins, what a common wiring mistake would
return, keyed by the catalogue sentence that names it (mistakes/encoder.toml).
Symbols: B batch, L tokens, d_model width.
"""

from __future__ import annotations

import torch

from autograder.feedback import Lazy, Satisfies, expect, expect_close, expect_shape, shown_what
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.catalogue import mistake
from tests.graders.support.ffn_mistakes import normalised_per_token
from tests.graders.support.params import difference
from tests.graders.support.standins import LayerParts

#: The parameter names of a contract EncoderLayer, sublayer by sublayer.
LAYER_PARAMETERS = [
    *(f"self_attn.W_{p}.{kind}" for p in "qkvo" for kind in ("weight", "bias")),
    "add_norm_1.norm.weight",
    "add_norm_1.norm.bias",
    *(f"feed_forward.W_{i}.{kind}" for i in (1, 2) for kind in ("weight", "bias")),
    "add_norm_2.norm.weight",
    "add_norm_2.norm.bias",
]

#: An EncoderLayer's sublayers: (attribute, module, class, its arguments from (d_model, h, d_ff))
SUBLAYERS = (
    ("self_attn", "multi_head_attention", "MultiHeadAttention", lambda d, h, f: (d, h)),
    ("add_norm_1", "add_norm", "AddNorm", lambda d, h, f: (d,)),
    ("feed_forward", "feed_forward", "PositionwiseFeedForward", lambda d, h, f: (d, f)),
    ("add_norm_2", "add_norm", "AddNorm", lambda d, h, f: (d,)),
)


def layer_parameters(learner, d_model: int, num_heads: int, d_ff: int) -> list[str]:
    """The parameter names an EncoderLayer(d_model, num_heads, d_ff) of this learner must
    have: each sublayer's attribute, then the names the learner's own sublayer class gives its
    parameters. The sublayers' own tests grade those names: a feed-forward network with linear1
    instead of W_1 lost points in the encoder too (H44). A sublayer class that cannot be built
    counts with the contract's names (LAYER_PARAMETERS)."""
    names = []
    for attribute, module, cls, arguments in SUBLAYERS:
        try:
            sublayer = getattr(learner.module(module), cls)(*arguments(d_model, num_heads, d_ff))
            own = [p.name for p in learner.parameters(sublayer)]
        except LearnerError:
            own = [n.split(".", 1)[1] for n in LAYER_PARAMETERS if n.startswith(attribute + ".")]
        names += [f"{attribute}.{name}" for name in own]
    return names


MASK_DROPPED = mistake("encoder/mask-not-passed")
SECOND_RESIDUAL_FROM_INPUT = mistake("encoder/second-residual-from-input")
FEED_FORWARD_ON_INPUT = mistake("encoder/feed-forward-on-input")
NORMS_SWAPPED = mistake("encoder/norms-swapped")
FEED_FORWARD_SKIPPED = mistake("encoder/feed-forward-skipped")
FIRST_ADD_NORM_SKIPPED = mistake("encoder/first-add-norm-skipped")
LAYER_HINT = (
    "an EncoderLayer computes x2 = add_norm_1(x, self_attn(x, x, x, mask)[0]), then returns "
    "add_norm_2(x2, feed_forward(x2))"
)

SHARED_LAYER = mistake("encoder/shared-layer")
ONLY_LAST_LAYER = mistake("encoder/layers-read-input")
ONLY_FIRST_LAYER = mistake("encoder/only-first-layer")
LAYERS_REVERSED = mistake("encoder/layers-reversed")
STACK_MASK_DROPPED = mistake("encoder/stack-mask-not-passed")
PRE_NORM = mistake("encoder/pre-norm")
FINAL_NORM = mistake("encoder/final-norm")
STACK_HINT = "an Encoder applies its layers in order: for layer in self.layers: x = layer(x, mask)"


def _stages(parts: LayerParts, x: torch.Tensor, mask: torch.Tensor | None):
    """(attention output, x2, layer output) of the contract's composition of the twins."""
    attn, _ = parts.self_attn(x, x, x, mask)
    x2 = parts.add_norm_1(x, attn)
    return attn, x2, parts.add_norm_2(x2, parts.feed_forward(x2))


def layer_mistakes(parts: LayerParts, x: torch.Tensor, mask: torch.Tensor | None = None) -> dict:
    """What each common EncoderLayer wiring mistake returns with these stand-ins."""
    attn, x2, _ = _stages(parts, x, mask)
    found = {
        SECOND_RESIDUAL_FROM_INPUT: parts.add_norm_2(x, parts.feed_forward(x2)),
        FEED_FORWARD_ON_INPUT: parts.add_norm_2(x2, parts.feed_forward(x)),
        FEED_FORWARD_SKIPPED: x2,
        FIRST_ADD_NORM_SKIPPED: parts.add_norm_2(attn, parts.feed_forward(attn)),
    }
    swapped = parts.add_norm_2(x, attn)
    found[NORMS_SWAPPED] = parts.add_norm_1(swapped, parts.feed_forward(swapped))
    h = parts.add_norm_1.norm(x)  # pre-norm: x + sublayer(norm(x)), each sublayer in turn
    x1 = x + parts.self_attn(h, h, h, mask)[0]
    found[PRE_NORM] = x1 + parts.feed_forward(parts.add_norm_2.norm(x1))
    if mask is not None:
        found[MASK_DROPPED] = _stages(parts, x, None)[2]
    return found


@torch.no_grad()
def expect_layer_wiring(
    layer, parts: LayerParts, x: torch.Tensor, mask: torch.Tensor | None = None, *, what: str
):
    """The learner's EncoderLayer (with stand-ins `parts` set in) returns the contract's
    composition of its sublayers."""
    expected = _stages(parts, x, mask)[2]
    got = layer(x) if mask is None else layer(x, mask)
    expect_shape(got, tuple(x.shape), what=what)
    expect_close(
        got,
        expected,
        what=what,
        atol=1e-5,
        hint=LAYER_HINT,
        mistakes=Lazy(lambda: layer_mistakes(parts, x, mask)),
    )


def stack_forward(layers: list, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """The contract's Encoder forward: `layers` (the twins) applied in order."""
    for layer in layers:
        x = layer(x, mask)
    return x


def stack_mistakes(layers: list, x: torch.Tensor, mask: torch.Tensor | None = None) -> dict:
    """What each common Encoder wiring mistake returns with these stand-in layers."""
    found = {
        ONLY_LAST_LAYER: layers[-1](x, mask),
        ONLY_FIRST_LAYER: layers[0](x, mask),
        LAYERS_REVERSED: stack_forward(layers[::-1], x, mask),
    }
    if mask is not None:
        found[STACK_MASK_DROPPED] = stack_forward(layers, x, None)
    found[FINAL_NORM] = Satisfies(normalised_per_token)  # a fresh LayerNorm after the last layer
    return found


@torch.no_grad()
def expect_stack_wiring(encoder, layers: list, x: torch.Tensor, mask=None, *, what: str):
    """The learner's Encoder (with stand-in `layers` set in) applies them in order."""
    expected = stack_forward(layers, x, mask)
    got = encoder(x) if mask is None else encoder(x, mask)
    expect_shape(got, tuple(x.shape), what=what)
    expect_close(
        got,
        expected,
        what=what,
        atol=1e-5,
        hint=STACK_HINT,
        mistakes=Lazy(lambda: stack_mistakes(layers, x, mask)),
    )


def expect_separate_layers(
    learner, encoder, num_layers: int, layer_names: list[str], *, what: str
) -> None:
    """Fail unless `encoder.layers` holds num_layers layers that share no parameter, each with
    the parameter names `layer_names` (layer_parameters; the learner's own layers: no stand-ins
    here)."""
    what = shown_what(what)  # a hidden test shows no inputs
    count = len(encoder.layers)
    expect(
        count == num_layers,
        f"{what}.layers holds {count} layers; expected num_layers = {num_layers}. Hint: build "
        "self.layers = nn.ModuleList([EncoderLayer(...) for _ in range(num_layers)]).",
    )
    owner: dict[object, str] = {}
    for i in range(num_layers):
        for p in learner.parameters(encoder.layers[i]):
            name = f"layers.{i}.{p.name}"
            first = owner.setdefault(p.storage, name)
            # one module under two names inside one layer is no layer shared with another
            cause = "" if first.startswith(f"layers.{i}.") else f" {SHARED_LAYER}"
            expect(
                first == name,
                f"In {what}, {first} and {name} are one and the same parameter.{cause}",
            )
    got = sorted(p.name for p in learner.parameters(encoder))
    expected = sorted(f"layers.{i}.{name}" for i in range(num_layers) for name in layer_names)
    outside = [name for name in got if not name.startswith("layers.")]
    fix = (
        FINAL_NORM
        if outside and all("norm" in name for name in outside)
        else "Hint: self.layers must be an nn.ModuleList of num_layers EncoderLayers and nothing "
        "else may hold parameters."
    )
    expect(
        got == expected,
        f"{what} has the wrong parameters: {difference(got, expected)}. Expected layers.0 to "
        f"layers.{num_layers - 1}, each with {', '.join(layer_names)}. {fix}",
    )
