"""The encoder's wiring graded with the learner's own sublayers, where the course supplies no
stand-ins (a learner's own repository: the stand-ins never ship, support.standins).

The harness draws weights for the learner's `self_attn`, `add_norm_1`, `feed_forward` and
`add_norm_2` (by the contract's names; LayerNorm weights near 1, so that swapped or extra norms
show), loads them into the learner's module and into torch's built-ins, called the contract's
way (support.torch_equivalents): what the contract's composition of those sublayers returns is
then the expected value. A sublayer whose own computation is wrong makes the wiring
test fail too; the report then says to fix that component first (the test's `uses` marker).
Symbols: B batch, L tokens, d_model width, h = num_heads, d_ff inner width.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from autograder.feedback import GradingFailure, shown_what
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.torch_equivalents import torch_mha_forward, torch_mha_from

OWN_PARTS_UNUSABLE = (
    "{what} is graded here with your own sublayers (your instructor grades it with known-good "
    "ones), but their parameters are not the contract's: {missing} missing. Fix your "
    "MultiHeadAttention, PositionwiseFeedForward and AddNorm first."
)
SUBLAYER_NAMES = (
    *(f"self_attn.W_{p}.weight" for p in "qkvo"),
    "add_norm_1.norm.weight",
    "add_norm_1.norm.bias",
    *(f"feed_forward.W_{i}.{kind}" for i in (1, 2) for kind in ("weight", "bias")),
    "add_norm_2.norm.weight",
    "add_norm_2.norm.bias",
)


class OwnAttention(nn.Module):
    """nn.MultiheadAttention with a contract state dict, called the contract's way."""

    def __init__(self, state, d_model: int, heads: int) -> None:
        super().__init__()
        self.attention = torch_mha_from(state, d_model, heads)

    def forward(self, query, key, value, mask=None):
        return torch_mha_forward(self.attention, query, key, value, mask)


class OwnAddNorm(nn.Module):
    """LayerNorm(x + sublayer_output) with the learner's norm weights (`norm`, `dropout` as the
    contract names them, dropout off)."""

    def __init__(self, state, eps: float) -> None:
        super().__init__()
        weight = state["norm.weight"]
        self.norm = nn.LayerNorm(weight.shape[0], eps=eps).to(weight.dtype)
        self.norm.load_state_dict({"weight": weight, "bias": state["norm.bias"]})
        self.dropout = nn.Identity()

    def forward(self, x, sublayer_output):
        return self.norm(x + sublayer_output)


class OwnFeedForward(nn.Module):
    """W_2(relu(W_1(x))) with the learner's weights."""

    def __init__(self, state) -> None:
        super().__init__()
        self.weights = {k: v.detach() for k, v in state.items()}

    def forward(self, x):
        w = self.weights
        return F.linear(
            F.relu(F.linear(x, w["W_1.weight"], w["W_1.bias"])), w["W_2.weight"], w["W_2.bias"]
        )


class OwnLayer(nn.Module):
    """The contract's EncoderLayer composition of own parts (`composed`)."""

    def __init__(self, parts) -> None:
        super().__init__()
        self.self_attn, self.add_norm_1, self.feed_forward, self.add_norm_2 = parts

    def forward(self, x, mask=None):
        return composed(self, x, mask)


def composed(parts, x, mask=None):
    """x2 = add_norm_1(x, self_attn(x, x, x, mask)[0]); add_norm_2(x2, feed_forward(x2)), of
    anything with those four parts."""
    attended = parts.self_attn(x, x, x, mask)[0]
    x2 = parts.add_norm_1(x, attended)
    return parts.add_norm_2(x2, parts.feed_forward(x2))


def own_layer_parts(layer, rng, d_model: int, heads: int, *, what: str) -> tuple:
    """(self_attn, add_norm_1, feed_forward, add_norm_2) of the learner's EncoderLayer `layer`,
    its weights drawn from `rng` and loaded into it (and into the built-ins)."""
    state = _seeded(layer, rng, what)
    return _parts(state, layer, d_model, heads, what=what, prefix="")


def own_stack_layers(encoder, rng, num_layers: int, d_model: int, heads: int, *, what: str):
    """The contract layers of the learner's Encoder's own layers, in order, their weights drawn
    from `rng` and loaded into it."""
    state = _seeded(encoder, rng, what)
    return [
        OwnLayer(_parts(state, encoder.layers[i], d_model, heads, what=what, prefix=f"layers.{i}."))
        for i in range(num_layers)
    ]


def _seeded(module, rng, what: str) -> dict[str, torch.Tensor]:
    """Weights for every parameter of the learner's module (seed_weights' draw), loaded into it
    (eval mode); a state it cannot take says so."""
    try:
        names = dict(module.state_dict())
        state = {name: _draw(rng, name, value) for name, value in names.items()}
        module.load_state_dict(state)
        module.eval()
    except LearnerError as error:
        raise GradingFailure(f"{shown_what(what)}: {error.feedback}") from None
    return state


def _draw(rng, name: str, value: torch.Tensor) -> torch.Tensor:
    shape = tuple(value.shape)
    if "norm" in name and name.endswith("weight"):
        draw = 1.0 + 0.2 * rng.standard_normal(shape)
    elif len(shape) == 2:
        draw = rng.standard_normal(shape) / shape[1] ** 0.5
    else:
        draw = 0.1 * rng.standard_normal(shape)
    return torch.from_numpy(draw).to(value.dtype)


def _parts(state, layer, d_model: int, heads: int, *, what: str, prefix: str) -> tuple:
    missing = [prefix + name for name in SUBLAYER_NAMES if prefix + name not in state]
    if missing:
        shown = ", ".join(missing[:4]) + (
            f" and {len(missing) - 4} more" if len(missing) > 4 else ""
        )
        raise GradingFailure(OWN_PARTS_UNUSABLE.format(what=shown_what(what), missing=shown))

    def sub(name: str) -> dict[str, torch.Tensor]:
        head = f"{prefix}{name}."
        return {k[len(head) :]: v for k, v in state.items() if k.startswith(head)}

    return (
        OwnAttention(sub("self_attn"), d_model, heads),
        OwnAddNorm(sub("add_norm_1"), _eps(layer, "add_norm_1")),
        OwnFeedForward(sub("feed_forward")),
        OwnAddNorm(sub("add_norm_2"), _eps(layer, "add_norm_2")),
    )


def _eps(layer, name: str) -> float:
    """The eps the learner's AddNorm's norm keeps (1e-5 when it keeps none readable)."""
    try:
        value = getattr(layer, name).norm.eps
    except LearnerError:
        return 1e-5
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 1e-5
