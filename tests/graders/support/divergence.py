"""Where a wrong multi-head attention result first leaves the expected computation.

- When a learner's MultiHeadAttention fails and matches no catalogued mistake, `locate` compares
  what can be observed (the per-head weights (B, h, L, S) and the output (B, L, d_model)) with
  the expected computation (`trace`), step by step in the order of the paper (Vaswani et al.
  2017, section 3.2.2): the projections, the per-head scores, the weights, the concatenation,
  the output projection.
- It says "First difference found at <step>" only for a step it can tell apart from the others;
  when the observations cannot separate two steps, it names both.
- Everything runs in the trusted harness with torch built-ins; the learner process is never
  asked for more than the call the test made. Messages carry no array values, so they are safe
  in hidden tests (the one number, a score scale factor, is left out of hidden tests).

Symbols: B batch, L queries, S keys, d_model width, h heads, d_k = d_model // h.
How each step is told apart:
docs/internals/notebook-mistakes.md#where-a-wrong-result-first-diverges.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from autograder.feedback import is_hidden
from tests.graders.support.catalogue import mistake

FOUND = "First difference found at {stage}: {detail}."
NOT_SEPARABLE = "The first difference is in {stages}: {detail}."

# Tolerances for the reconstructions: log-weights and an undone W_o amplify float32 rounding.
LOG_ATOL = 2e-3
SOLVE_ATOL = 1e-3
MIN_WEIGHT = 1e-4  # log-weights below this are too rounded to compare

StateDict = Mapping[str, torch.Tensor]


@dataclass(frozen=True)
class Trace:
    """The expected computation, in float64. Q (B, h, L, d_k), K and V (B, h, S, d_k), scores
    and weights (B, h, L, S), allowed (B, h, L, S) bool, heads (B, h, L, d_k), concat and
    output (B, L, d_model)."""

    Q: torch.Tensor
    K: torch.Tensor
    V: torch.Tensor
    allowed: torch.Tensor
    scores: torch.Tensor
    weights: torch.Tensor
    heads: torch.Tensor
    concat: torch.Tensor
    output: torch.Tensor


def _f64(t) -> torch.Tensor:
    return torch.as_tensor(t).detach().to(torch.float64)


def _state64(state: StateDict) -> dict[str, torch.Tensor]:
    return {k: _f64(v) for k, v in state.items()}


def _project(x, state, name, *, transposed=False, bias=True) -> torch.Tensor:
    weight = state[f"{name}.weight"]
    return F.linear(
        x, weight.T if transposed else weight, state.get(f"{name}.bias") if bias else None
    )


def _split(x: torch.Tensor, heads: int, *, strided: bool = False) -> torch.Tensor:
    """(B, T, d_model) -> (B, h, T, d_k); head i takes features i*d_k:(i+1)*d_k, or with
    `strided` every h-th feature starting at i."""
    B, T, d_model = x.shape
    if strided:
        return x.view(B, T, d_model // heads, heads).permute(0, 3, 1, 2)
    return x.view(B, T, heads, d_model // heads).transpose(1, 2)


def packed_heads(state, heads: int, query, key, value) -> tuple[torch.Tensor, ...] | None:
    """(q, k, v), each (B, h, T, d_k) in float64, that a per-head split of the packed
    projection [W_q(query) | W_k(key) | W_v(value)] gives; None when it cannot be built (the
    lengths differ) or equals the contract's split (one head)."""
    if heads < 2 or query.shape != key.shape or key.shape != value.shape:
        return None
    s = _state64(state)
    parts = [_project(_f64(x), s, n) for x, n in ((query, "W_q"), (key, "W_k"), (value, "W_v"))]
    packed = torch.cat(parts, dim=-1)  # (B, T, 3 * d_model)
    B, T, width = packed.shape
    per_head = packed.view(B, T, heads, width // heads).transpose(1, 2)  # (B, h, T, 3 * d_k)
    return per_head.chunk(3, dim=-1)


def _merge(heads: torch.Tensor) -> torch.Tensor:
    B, h, L, d_k = heads.shape
    return heads.transpose(1, 2).reshape(B, L, h * d_k)


def _allowed(mask, shape) -> torch.Tensor:
    if mask is None:
        return torch.ones(shape, dtype=torch.bool)
    m = torch.as_tensor(mask).bool()
    if m.dim() == 3:
        m = m.unsqueeze(1)
    return m.expand(shape)


def _softmax(scores: torch.Tensor, allowed: torch.Tensor, dim: int = -1) -> torch.Tensor:
    weights = torch.softmax(scores.masked_fill(~allowed, -math.inf), dim=dim)
    return torch.nan_to_num(weights).masked_fill(~allowed, 0.0)


def trace(state: StateDict, heads: int, query, key, value, mask=None) -> Trace:
    """The expected multi-head attention, step by step, from the contract state dict."""
    s = _state64(state)
    q, k, v = _f64(query), _f64(key), _f64(value)
    Q, K, V = (_split(_project(x, s, n), heads) for x, n in ((q, "W_q"), (k, "W_k"), (v, "W_v")))
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    allowed = _allowed(mask, scores.shape)
    weights = _softmax(scores, allowed)
    out_heads = weights @ V
    concat = _merge(out_heads)
    return Trace(Q, K, V, allowed, scores, weights, out_heads, concat, _project(concat, s, "W_o"))


def _close(a: torch.Tensor, b: torch.Tensor, atol: float) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=atol, rtol=0, equal_nan=False))


def locate(
    state: StateDict,
    heads: int,
    query,
    key,
    value,
    mask,
    output,
    weights,
    *,
    atol: float,
) -> str | None:
    """One sentence saying where the learner's (output, weights) first differ from the expected
    computation, or None when nothing differs or the shapes are wrong (the shape message says
    more then)."""
    t = trace(state, heads, query, key, value, mask)
    w = _f64(weights) if getattr(weights, "shape", None) == t.weights.shape else None
    o = _f64(output) if getattr(output, "shape", None) == t.output.shape else None
    if w is None:
        return None
    if not _close(w, t.weights, atol):
        return _weights_stage(t, w) or _scores_stage(state, heads, query, key, value, t, w, o)
    if o is not None and not _close(o, t.output, atol):
        return _after_weights(state, heads, query, key, value, t, w, o)
    return None


# Wrong weights -------------------------------------------------------------------------------


def _weights_stage(t: Trace, w: torch.Tensor) -> str | None:
    """The weights break a rule any softmax over the allowed keys obeys."""
    rows = t.allowed.any(dim=-1)  # (B, h, L): queries that may attend to some key
    if torch.isnan(w).any():
        detail = (
            "some weights are NaN; a query whose keys are all masked gets all-zero weights "
            "(replace the NaN of such rows by 0 after the softmax)"
        )
        return FOUND.format(stage="the weights", detail=detail)
    hidden_weight = (w.abs() > 1e-6) & ~t.allowed & rows.unsqueeze(-1)
    if hidden_weight.any():
        detail = (
            "keys that the mask hides get a nonzero weight; fill the scores where the mask is "
            "False with -inf before the softmax, so that they weigh exactly 0"
        )
        return FOUND.format(stage="the per-head scores (the mask)", detail=detail)
    sums = w.sum(dim=-1)
    if not torch.allclose(sums[rows], torch.ones_like(sums[rows]), atol=1e-4):
        for dim, axis in ((2, "query axis (-2)"), (1, "head axis (1)")):
            if _close(w, _softmax(t.scores, t.allowed, dim=dim), LOG_ATOL):
                detail = (
                    f"your weights are the softmax of the right scores over the {axis}; "
                    "normalise each query's row over the keys: torch.softmax(scores, dim=-1)"
                )
                return FOUND.format(stage="the weights", detail=detail)
        detail = (
            "each query's weights must sum to 1 over the keys it may attend to, and yours do "
            "not; apply torch.softmax(scores, dim=-1) after masking the scores, and change the "
            "weights no further (dropout is off in eval mode)"
        )
        return FOUND.format(stage="the weights", detail=detail)
    if not bool(rows.all()) and bool((w.abs() > 1e-6)[~rows].any()):
        detail = "a query whose keys are all masked must get all-zero weights"
        return FOUND.format(stage="the weights", detail=detail)
    return None


def _centered_logs(w: torch.Tensor, scores: torch.Tensor, usable: torch.Tensor):
    """log-weights and scores on the usable entries, each minus its row mean there."""
    count = usable.sum(dim=-1, keepdim=True).clamp(min=1)
    logs = torch.log(w.clamp(min=1e-300)).masked_fill(~usable, 0.0)
    s = scores.masked_fill(~usable, 0.0)
    logs = (logs - logs.sum(dim=-1, keepdim=True) / count).masked_fill(~usable, 0.0)
    s = (s - s.sum(dim=-1, keepdim=True) / count).masked_fill(~usable, 0.0)
    return logs, s


def _softmax_of(w: torch.Tensor, scores: torch.Tensor, allowed: torch.Tensor) -> bool:
    """Whether w = softmax(scores) over the allowed keys, judged on the log scale."""
    usable = allowed & (w > MIN_WEIGHT)
    logs, s = _centered_logs(w, scores, usable)
    return _close(logs, s, LOG_ATOL * max(1.0, float(s.abs().max())))


def _scores_stage(state, heads, query, key, value, t: Trace, w, o) -> str:
    """The weights are a softmax over the allowed keys, of the wrong scores."""
    usable = t.allowed & (w > MIN_WEIGHT)
    logs, s = _centered_logs(w, t.scores, usable)
    factor = float((logs * s).sum() / (s * s).sum().clamp(min=1e-300))
    if abs(factor - 1.0) < 1e-3 and _close(logs, s, LOG_ATOL):
        return "Your weights differ from the expected ones by rounding only. " + mistake(
            "multi_head_attention/float32-inside"
        )
    if factor > 0 and _close(logs, factor * s, LOG_ATOL * max(1.0, float(s.abs().max()))):
        times = "" if is_hidden() else f" (about {factor:.3g} times the expected scores)"
        detail = (
            f"your weights are the softmax of the right scores at another scale{times}; each "
            "head divides Q_h K_h^T by sqrt(d_k), with d_k = d_model // num_heads"
        )
        return FOUND.format(stage="the per-head scores", detail=detail)
    if t.scores.shape[-1] == t.scores.shape[-2]:
        swapped = t.scores.transpose(-2, -1)
        if _softmax_of(w, swapped, t.allowed):
            detail = (
                "your scores are K Q^T, the transpose of Q K^T; compute Q @ K.transpose(-2, -1) "
                "so that row i holds query i's scores"
            )
            return FOUND.format(stage="the per-head scores", detail=detail)
    projection = _projection_hypothesis(state, heads, query, key, value, t, w)
    if projection:
        return FOUND.format(stage="the projections", detail=projection)
    wrong = [str(i) for i in range(w.shape[1]) if not _close(w[:, i], t.weights[:, i], 1e-4)]
    which = "every head" if len(wrong) == w.shape[1] else f"head {', '.join(wrong)}"
    detail = (
        f"your weights are a softmax over the allowed keys, but not of Q_h K_h^T / sqrt(d_k) "
        f"(in {which})"
    )
    if o is not None and _close(o, _project(_merge(w @ t.V), _state64(state), "W_o"), SOLVE_ATOL):
        detail += "; everything after the weights (values, concatenation, W_o) agrees with them"
    return NOT_SEPARABLE.format(
        stages="the projections of the query and key or the per-head scores", detail=detail
    )


def _projection_hypothesis(state, heads, query, key, value, t: Trace, w) -> str | None:
    """Q and K computed another way: a weight used without .T, no bias, every h-th feature, a
    per-head split of the packed [Q | K | V] (support.mha_packed)."""
    s = _state64(state)
    q, k = _f64(query), _f64(key)
    d_k = t.Q.shape[-1]
    tries: dict[str, Callable[[], tuple[torch.Tensor, torch.Tensor]]] = {
        "you multiplied by W_q.weight and W_k.weight without transposing them; call the "
        "layers (self.W_q(query), self.W_k(key)), which compute x W^T + b": lambda: (
            _split(_project(q, s, "W_q", transposed=True), heads),
            _split(_project(k, s, "W_k", transposed=True), heads),
        ),
        "your query and key projections leave out the biases; call the layers "
        "(self.W_q(query), self.W_k(key)), which add them": lambda: (
            _split(_project(q, s, "W_q", bias=False), heads),
            _split(_project(k, s, "W_k", bias=False), heads),
        ),
        "your heads take every h-th feature; head i takes features i*d_k:(i+1)*d_k, so split "
        "with .view(B, L, h, d_k).transpose(1, 2)": lambda: (
            _split(_project(q, s, "W_q"), heads, strided=True),
            _split(_project(k, s, "W_k"), heads, strided=True),
        ),
    }
    if heads == 1:
        del tries[next(k for k in tries if "every h-th" in k)]
    packed = packed_heads(state, heads, query, key, value)
    if packed is not None:
        tries[mistake("multi_head_attention/qkv-split-per-head")] = lambda: packed[:2]
    for detail, build in tries.items():
        Q, K = build()
        if _softmax_of(w, Q @ K.transpose(-2, -1) / math.sqrt(d_k), t.allowed):
            return detail
    return None


# Right weights, wrong output ----------------------------------------------------------------


def _after_weights(state, heads, query, key, value, t: Trace, w, o) -> str:
    s = _state64(state)
    bias = s.get("W_o.bias")
    shifted = o - bias if bias is not None else o
    concat = torch.linalg.solve(s["W_o.weight"], shifted.transpose(-2, -1)).transpose(-2, -1)
    values = {
        "your values are W_v applied to the key; the values come from the value input: "
        "V = W_v(value)": _project(_f64(key), s, "W_v"),
        "your values are W_v applied to the query; the values come from the value input: "
        "V = W_v(value)": _project(_f64(query), s, "W_v"),
        "you multiplied the value by W_v.weight without transposing it; call the layer: "
        "self.W_v(value)": _project(_f64(value), s, "W_v", transposed=True),
    }
    for detail, V in values.items():
        if V.shape[1] == w.shape[-1] and _close(concat, _merge(w @ _split(V, heads)), SOLVE_ATOL):
            return FOUND.format(stage="the projections", detail=detail)
    if _close(_sorted_per_batch(concat), _sorted_per_batch(t.concat), SOLVE_ATOL):
        detail = (
            "W_o receives the right head outputs, in other places; concatenate the heads in "
            "order, with heads.transpose(1, 2).reshape(B, L, d_model)"
        )
        return FOUND.format(stage="the concatenation", detail=detail)
    transposed = (
        "you multiplied by W_o.weight without transposing it; call the layer: self.W_o(concat)"
    )
    no_bias = "your output projection leaves out its bias; call the layer: self.W_o(concat)"
    uses = {
        transposed: _project(t.concat, s, "W_o", transposed=True),
        no_bias: _project(t.concat, s, "W_o", bias=False),
    }
    for detail, candidate in uses.items():
        if _close(o, candidate, SOLVE_ATOL):
            return FOUND.format(stage="the output projection", detail=detail)
    detail = (
        "your weights are right, so the difference comes after them, in the values "
        "(V = W_v(value) split like Q and K), the concatenation or W_o"
    )
    return NOT_SEPARABLE.format(
        stages="the value projection, the concatenation or the output projection", detail=detail
    )


def _sorted_per_batch(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(x.shape[0], -1).sort(dim=-1).values
