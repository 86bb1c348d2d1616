"""The parts the encoder builds on, set known-good when the course supplies them.

So that the encoder's wiring is graded alone:
- after the learner's EncoderLayer is constructed, its `self_attn`, `add_norm_1`, `feed_forward`
  and `add_norm_2` are replaced in the worker by the course's stand-ins, with weights drawn here
  (an Encoder's `layers[i]` by EncoderLayer stand-ins); the harness's twins
  (`learner.standins`) compute what the wiring must return, and nothing of the reference is used;
- without stand-ins (a learner's own repository), the wiring is graded with the learner's own
  sublayers, against torch's built-ins loaded with their weights (support.own_parts);
- a module that cannot be constructed (a sublayer's __init__ raises) cannot be graded:
  `construct` says so, with the learner's own error.

Symbols: B batch, L tokens, d_model width, h = num_heads, d_ff inner width.
Design: docs/internals/notebook-mistakes.md#stand-ins-in-the-encoders-graders.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.inputs import array
from tests.graders.support.own_parts import own_layer_parts, own_stack_layers

CANNOT_BUILD = (
    "{call} could not be constructed, so its wiring cannot be graded (it is graded with "
    "known-good stand-ins for the parts it builds on, set in after construction). {feedback}"
)
EPS = 1e-5
#: The components an EncoderLayer builds on (course.toml depends_on), by sublayer kind.
SUBLAYER_COMPONENTS = ("multi_head_attention", "add_norm", "feed_forward")


def construct(factory, *args, call: str):
    """`factory(*args)` in the worker; a failure says that the wiring cannot be graded."""
    try:
        return factory(*args)
    except LearnerError as err:
        if err.kind == "not_implemented" and err.file.endswith("/encoder.py"):
            raise  # the encoder itself is still a stub: its own sentence says all
        feedback = CANNOT_BUILD.format(call=call, feedback=err.feedback)
        raise LearnerError(
            kind=err.kind,
            feedback=feedback,
            exc_type=err.exc_type,
            exc_mro=err.exc_mro,
            message=err.message,
            location=err.location,
            traceback=err.traceback,
            forbidden=err.forbidden,
            file=err.file,
        ) from None


def seed_weights(module: torch.nn.Module, rng: np.random.Generator) -> torch.nn.Module:
    """Draw every parameter from `rng`: LayerNorm weights near 1 (so that swapped norms show),
    matrices with a spread of 1/sqrt(fan-in), other vectors near 0."""
    state = {}
    for name, value in module.state_dict().items():
        shape = tuple(value.shape)
        if "norm" in name and name.endswith("weight"):
            draw = 1.0 + 0.2 * array(rng, *shape)
        elif len(shape) == 2:
            draw = array(rng, *shape) / np.sqrt(shape[1])
        else:
            draw = 0.1 * array(rng, *shape)
        state[name] = torch.from_numpy(np.asarray(draw)).to(value.dtype)
    module.load_state_dict(state, strict=True)
    return module.eval()


def install(learner, obj, parts, rng: np.random.Generator, *, then_eval: bool = False):
    """Put a seeded stand-in at each `obj.<path>` of `parts` ([(path, kind, config)]) in the
    worker, then call `obj.eval()` when `then_eval`, all in one request; return the harness's
    twins (the same modules with the same weights), in order."""
    twins = [seed_weights(learner.standins.build(kind, config), rng) for _, kind, config in parts]
    learner.set_standins(
        obj,
        [
            (path, kind, config, twin.state_dict())
            for (path, kind, config), twin in zip(parts, twins, strict=True)
        ],
        then=[("eval", (), {})] if then_eval else (),
    )
    return twins


def record_replaced(request, learner) -> None:
    """Tell the report that this test's sublayers are the course's stand-ins, not the learner's
    (the `uses` marker names them otherwise: pytest_plugin, results.py)."""
    if learner.standins is not None:
        for component in SUBLAYER_COMPONENTS:
            request.node.user_properties.append(("replaced", component))


@dataclass
class LayerParts:
    """The harness's twins of the stand-ins set into one EncoderLayer (or the built-ins loaded
    with the learner's own sublayers' weights)."""

    self_attn: torch.nn.Module
    add_norm_1: torch.nn.Module
    feed_forward: torch.nn.Module
    add_norm_2: torch.nn.Module


def layer_with_standins(
    learner, encoder_module, rng: np.random.Generator, *args, call: str
) -> tuple[object, LayerParts]:
    """The learner's EncoderLayer(*args) (d_model, num_heads, d_ff[, dropout]) with stand-ins
    for its four sublayers, in eval() mode; and the harness's twins of them. Without stand-ins:
    its own sublayers, and the built-ins loaded with their weights."""
    d_model, num_heads, d_ff = args[:3]
    dropout = float(args[3]) if len(args) > 3 else 0.0
    layer = construct(encoder_module.EncoderLayer, *args, call=call)
    if learner.standins is None:
        return layer, LayerParts(*own_layer_parts(layer, rng, d_model, num_heads, what=call))
    mha = {"d_model": d_model, "num_heads": num_heads, "dropout": dropout, "bias": True}
    norm = {"d_model": d_model, "dropout": dropout, "eps": EPS}
    ffn = {"d_model": d_model, "d_ff": d_ff, "dropout": dropout}
    parts = [
        ("self_attn", "multi_head_attention", mha),
        ("add_norm_1", "add_norm", norm),
        ("feed_forward", "feed_forward", ffn),
        ("add_norm_2", "add_norm", norm),
    ]
    twins = LayerParts(*install(learner, layer, parts, rng, then_eval=True))
    return layer, twins


def stack_with_standins(
    learner, encoder_module, rng: np.random.Generator, *args, call: str
) -> tuple[object, list[torch.nn.Module]]:
    """The learner's Encoder(*args) (num_layers, d_model, num_heads, d_ff[, dropout]) with an
    EncoderLayer stand-in in each `layers[i]`, in eval() mode; and the twins. Without
    stand-ins: its own layers, and the built-ins loaded with their weights."""
    num_layers, d_model, num_heads, d_ff = args[:4]
    dropout = float(args[4]) if len(args) > 4 else 0.0
    encoder = construct(encoder_module.Encoder, *args, call=call)
    if learner.standins is None:
        layers = own_stack_layers(encoder, rng, num_layers, d_model, num_heads, what=call)
        return encoder, layers
    config = {
        "d_model": d_model,
        "num_heads": num_heads,
        "d_ff": d_ff,
        "dropout": dropout,
        "eps": EPS,
    }
    parts = [(f"layers.{i}", "encoder_layer", config) for i in range(num_layers)]
    twins = install(learner, encoder, parts, rng, then_eval=True)
    return encoder, twins
