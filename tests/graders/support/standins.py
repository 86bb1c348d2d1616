"""Known-good stand-ins for the parts the encoder builds on, so its wiring is graded alone.

After the learner's EncoderLayer is constructed, its `self_attn`, `add_norm_1`, `feed_forward`
and `add_norm_2` are replaced, in the worker, by modules made of torch's own modules
(autograder/runtime/standins.py: nn.MultiheadAttention called the contract's way, Linear -> ReLU
-> Linear, LayerNorm(x + y)) with weights drawn here; an Encoder's `layers[i]` are replaced by
nn.TransformerEncoderLayer stand-ins. The harness builds the same modules with the same weights
and computes what the learner's wiring must return. A learner whose MultiHeadAttention,
PositionwiseFeedForward or AddNorm is wrong, raises or hangs in forward still has the wiring
graded and earns those points; nothing of the reference is used.

If the learner's module cannot even be constructed (a sublayer's __init__ raises), the wiring
cannot be graded: `construct` says so, with the learner's own error (an encoder.py that is still
the stub just says it is not implemented yet).
Symbols: B batch, L tokens, d_model width, h = num_heads, d_ff inner width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from autograder.runtime import LearnerError
from autograder.runtime import standins as runtime_standins
from tests.graders.support.inputs import array

CANNOT_BUILD = (
    "{call} could not be constructed, so its wiring cannot be graded (it is graded with "
    "known-good stand-ins for the parts it builds on, set in after construction). {feedback}"
)
EPS = 1e-5


def construct(factory, *args, call: str):
    """`factory(*args)` in the worker; a failure says that the wiring cannot be graded."""
    try:
        return factory(*args)
    except LearnerError as err:
        if err.kind == "not_implemented" and "/encoder.py:" in err.location:
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
    twins = [seed_weights(runtime_standins.build(kind, config), rng) for _, kind, config in parts]
    learner.set_standins(
        obj,
        [
            (path, kind, config, twin.state_dict())
            for (path, kind, config), twin in zip(parts, twins, strict=True)
        ],
        then=[("eval", (), {})] if then_eval else (),
    )
    return twins


@dataclass
class LayerParts:
    """The harness's twins of the stand-ins set into one EncoderLayer."""

    self_attn: torch.nn.Module
    add_norm_1: torch.nn.Module
    feed_forward: torch.nn.Module
    add_norm_2: torch.nn.Module


def layer_with_standins(
    learner, encoder_module, rng: np.random.Generator, *args, call: str
) -> tuple[object, LayerParts]:
    """The learner's EncoderLayer(*args) (d_model, num_heads, d_ff[, dropout]) with stand-ins
    for its four sublayers, in eval() mode; and the harness's twins of them."""
    d_model, num_heads, d_ff = args[:3]
    layer = construct(encoder_module.EncoderLayer, *args, call=call)
    mha = {"d_model": d_model, "num_heads": num_heads, "bias": True}
    norm = {"d_model": d_model, "eps": EPS}
    ffn = {"d_model": d_model, "d_ff": d_ff}
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
    nn.TransformerEncoderLayer stand-in in each `layers[i]`, in eval() mode; and the twins."""
    num_layers, d_model, num_heads, d_ff = args[:4]
    encoder = construct(encoder_module.Encoder, *args, call=call)
    config = {"d_model": d_model, "num_heads": num_heads, "d_ff": d_ff, "eps": EPS}
    parts = [(f"layers.{i}", "encoder_layer", config) for i in range(num_layers)]
    twins = install(learner, encoder, parts, rng, then_eval=True)
    return encoder, twins
