"""Stand-ins: known-good modules built from torch's own modules, put in place of a learner's
submodules so that a wiring test grades the learner's composition and nothing beneath it.

A grader asks for one with ``LearnerSession.set_standin(obj, "self_attn", kind, config, state)``
(see worker/handler.RequestHandler.op_set_standins). The request carries only plain data: the kind's
name (a key of KINDS), its configuration (ints, floats, bools) and its weights (a state dict of
tensors). The worker builds the module with ``build`` -- trusted code, no learner code runs while it
is built -- and sets it on the learner's module. The harness builds the same module with ``build``
and the same weights to compute what the learner's wiring must return.

Kinds and their call conventions (symbols: B batch, L queries, S keys, d_model width,
h = num_heads, d_ff inner width; masks are bool, True where a query MAY attend to a key, the
convention of torch.nn.functional.scaled_dot_product_attention):

    multi_head_attention  {d_model, num_heads, bias}
        forward(query (B, L, d_model), key (B, S, d_model), value (B, S, d_model), mask=None)
        -> (output (B, L, d_model), weights (B, h, L, S)); mask broadcastable to (B, h, L, S)
        as (L, S), (B, L, S) or (B, h, L, S). An nn.MultiheadAttention(batch_first=True).
    feed_forward          {d_model, d_ff}
        forward(x (..., d_model)) -> (..., d_model): Linear -> ReLU -> Linear.
    add_norm              {d_model, eps}
        forward(x, sublayer_output), both (..., d_model) -> LayerNorm(x + sublayer_output).
    encoder_layer         {d_model, num_heads, d_ff, eps}
        forward(x (B, L, d_model), mask=None) -> (B, L, d_model): an nn.TransformerEncoderLayer
        (relu, post-norm, batch_first, dropout 0); mask as for multi_head_attention with S = L.

Function stand-ins replace a function that one learner module imported from another
(``from .softmax import softmax``), so that the importing module's graders do not charge the
imported one's mistakes a second time (``LearnerSession.stand_in_function``):

    softmax               softmax(x (...), axis=-1) -> (...): the max-shifted softmax (NumPy,
                          or torch for a tensor); a slice that is all -inf gives zeros, NaN
                          stays NaN; called with the learner's own parameter names.

Every query row of a mask must keep at least one key (the torch modules give NaN otherwise).
Some kinds wrap APIs a course may forbid (nn.MultiheadAttention); guard.exempting lets calls
that go through a stand-in the harness installed pass without being recorded as the learner's.

Sources: the PyTorch documentation pages "torch.nn.MultiheadAttention", "torch.nn.LayerNorm",
"torch.nn.TransformerEncoderLayer".
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

NO_KIND = "No stand-in kind is called {kind!r}; expected one of: {names}."
BAD_CONFIG = "The stand-in {kind!r} expects the settings {expected}; got {got}."
BAD_SETTING = "The stand-in {kind!r} setting {name} must be {type}; got {value!r}."
BAD_MASK = "Expected a mask broadcastable to {expected} (B, h, L, S); got shape {got}."


class StandInError(ValueError):
    """A stand-in cannot be built as asked; the message says what was expected and what came."""


def torch_attn_mask(mask: Any, batch: int, heads: int, queries: int, keys: int) -> Any:
    """A contract mask (True = may attend) as the (B*h, L, S) bool mask torch's attention
    modules read (True = may NOT attend); None stays None. The mask may be (L, S), (B, L, S)
    (shared by the heads) or (B, h, L, S); ValueError (a sentence) when it does not broadcast.
    The graders use it too (tests/graders/support/torch_equivalents.py)."""
    if mask is None:
        return None
    m = torch.as_tensor(mask).bool()
    if m.dim() == 3:
        m = m.unsqueeze(1)  # (B, 1, L, S): one mask per batch element, shared by the heads
    try:
        m = m.expand(batch, heads, queries, keys)
    except RuntimeError:
        expected = (batch, heads, queries, keys)
        raise ValueError(BAD_MASK.format(expected=expected, got=tuple(m.shape))) from None
    return (~m).reshape(batch * heads, queries, keys)


class MultiHeadAttentionStandIn(nn.Module):
    """nn.MultiheadAttention called as forward(query, key, value, mask) -> (output, weights)."""

    def __init__(self, d_model: int, num_heads: int, bias: bool) -> None:
        super().__init__()
        self.attention = nn.MultiheadAttention(
            d_model, num_heads, dropout=0.0, bias=bias, batch_first=True
        )

    def forward(self, query, key, value, mask=None):
        heads = self.attention.num_heads
        attn_mask = torch_attn_mask(mask, query.shape[0], heads, query.shape[1], key.shape[1])
        return self.attention(
            query,
            key,
            value,
            attn_mask=attn_mask,
            need_weights=True,
            average_attn_weights=False,
        )


class FeedForwardStandIn(nn.Module):
    """Linear(d_model, d_ff) -> ReLU -> Linear(d_ff, d_model)."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        return self.net(x)


class AddNormStandIn(nn.Module):
    """forward(x, sublayer_output) = LayerNorm(x + sublayer_output) (post-norm)."""

    def __init__(self, d_model: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)

    def forward(self, x, sublayer_output):
        return self.norm(x + sublayer_output)


def new_torch_encoder_layer(
    d_model: int, num_heads: int, d_ff: int, eps: float
) -> nn.TransformerEncoderLayer:
    """nn.TransformerEncoderLayer as the contract's EncoderLayer: ReLU, post-norm, batch_first,
    no dropout. The graders build theirs with it too."""
    return nn.TransformerEncoderLayer(
        d_model,
        num_heads,
        d_ff,
        dropout=0.0,
        activation="relu",
        layer_norm_eps=eps,
        batch_first=True,
        norm_first=False,
    )


class EncoderLayerStandIn(nn.Module):
    """nn.TransformerEncoderLayer (relu, post-norm, batch_first) called as forward(x, mask)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
        super().__init__()
        self.layer = new_torch_encoder_layer(d_model, num_heads, d_ff, eps)

    def forward(self, x, mask=None):
        heads = self.layer.self_attn.num_heads
        src_mask = torch_attn_mask(mask, x.shape[0], heads, x.shape[1], x.shape[1])
        return self.layer(x, src_mask=src_mask)


# kind -> (class, {setting: type})
KINDS: dict[str, tuple[Callable[..., nn.Module], dict[str, type]]] = {
    "multi_head_attention": (
        MultiHeadAttentionStandIn,
        {"d_model": int, "num_heads": int, "bias": bool},
    ),
    "feed_forward": (FeedForwardStandIn, {"d_model": int, "d_ff": int}),
    "add_norm": (AddNormStandIn, {"d_model": int, "eps": float}),
    "encoder_layer": (
        EncoderLayerStandIn,
        {"d_model": int, "num_heads": int, "d_ff": int, "eps": float},
    ),
}

#: The stand-ins' forward functions: the frames guard.exempting looks for.
FORWARD_CODES = frozenset(cls.forward.__code__ for cls, _ in KINDS.values())


def softmax(x: Any, axis: int = -1) -> Any:
    """The softmax stand-in: exp(x - m) / sum exp(x - m) along `axis`, m the slice's maximum
    (0 for an all -inf slice, which gives zeros; a NaN stays NaN). Shapes: x (...) -> (...).
    A torch tensor gives a tensor (differentiable, its dtype kept); anything else NumPy's
    array, a floating x keeping its dtype, any other float64. Source: Vaswani et al. 2017,
    section 3.2.1; the PyTorch documentation page "torch.softmax"."""
    if isinstance(x, torch.Tensor):
        m = x.detach().amax(dim=axis, keepdim=True)
        e = torch.exp(x - torch.where(m == -torch.inf, torch.zeros_like(m), m))
        total = e.sum(dim=axis, keepdim=True)
        return e / torch.where(total == 0, torch.ones_like(total), total)
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(m == -np.inf, 0, m).astype(x.dtype))
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total != 0)


def softmax_like(own: Callable[..., Any]) -> Callable[..., Any] | None:
    """The softmax stand-in called the way `own` (a learner's softmax) is called: its first
    parameter is x, its second (any name) the axis, with own's default; None when own takes
    other parameters too (a temperature, say), which the stand-in cannot honour."""
    try:
        signature = inspect.signature(own)
    except Exception:  # a __signature__ of the learner's making  # noqa: BLE001
        return None
    params = list(signature.parameters.values())
    plain = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY)
    if not 1 <= len(params) <= 2 or any(p.kind not in plain for p in params):
        return None
    if len(params) == 1 or params[1].default is inspect.Parameter.empty:
        default_axis: Any = -1
    else:
        default_axis = params[1].default

    def softmax_standin(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        values = list(bound.arguments.values())
        return softmax(values[0], values[1] if len(values) > 1 else default_axis)

    return softmax_standin


#: kind -> (what makes the stand-in for a learner's function, or None when it cannot)
FUNCTIONS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any] | None]] = {
    "softmax": softmax_like
}


def function(kind: str, own: Callable[..., Any]) -> Callable[..., Any] | None:
    """The function stand-in `kind` for the learner's function `own`; None when it cannot
    stand in for it. StandInError for an unknown kind."""
    if not isinstance(kind, str) or kind not in FUNCTIONS:
        raise StandInError(NO_KIND.format(kind=kind, names=", ".join(FUNCTIONS)))
    return FUNCTIONS[kind](own)


def _setting(kind: str, name: str, wanted: type, value: Any) -> Any:
    if wanted is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    ok = isinstance(value, wanted) and (wanted is bool or not isinstance(value, bool))
    if wanted is int and ok:
        ok = value > 0
    if wanted is float and ok:
        ok = value > 0 and value == value
    if not ok:
        kind_name = {int: "a positive int", float: "a positive float", bool: "a bool"}[wanted]
        raise StandInError(BAD_SETTING.format(kind=kind, name=name, type=kind_name, value=value))
    return value


def build(
    kind: str, config: Mapping[str, Any], state: Mapping[str, torch.Tensor] | None = None
) -> nn.Module:
    """The stand-in `kind` with `config`, in eval() mode; with `state`, its weights (strict).

    Raises StandInError for an unknown kind or wrong settings, and RuntimeError (torch's) when
    the state dict does not fit.
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise StandInError(NO_KIND.format(kind=kind, names=", ".join(KINDS)))
    cls, settings = KINDS[kind]
    if not isinstance(config, Mapping) or set(config) != set(settings):
        got = sorted(map(str, config)) if isinstance(config, Mapping) else type(config).__name__
        raise StandInError(BAD_CONFIG.format(kind=kind, expected=sorted(settings), got=got))
    args = {name: _setting(kind, name, wanted, config[name]) for name, wanted in settings.items()}
    module = cls(**args)
    if state is not None:
        module.load_state_dict(dict(state), strict=True)
    return module.eval()
