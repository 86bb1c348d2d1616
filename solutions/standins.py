"""Transformers 101's stand-ins: known-good modules and softmax that the graders set in place.

The graders set them in place of a learner's parts (course.toml `[course] standins`; the
framework loads this file: autograder/runtime/shared/standin_registry.py). Instructor only:
every class here computes what a component computes, so it never ships (the release's leak
check refuses its text).

- Each stand-in has exactly the attributes, submodules and parameters design/STUDENT_API.md
  gives the module it replaces, so learner code that touches them (`self.add_norm_1.norm`,
  `self.self_attn.W_q`, `.dropout`) works on a stand-in as on its own module.
- KINDS: multi_head_attention (W_q, W_k, W_v, W_o, dropout), feed_forward (W_1, W_2, dropout),
  add_norm (norm, dropout), encoder_layer (the three above as self_attn, add_norm_1,
  feed_forward, add_norm_2). FUNCTIONS: softmax, torch's softmax with zeros for an all -inf
  slice, called with the learner's own parameter names (softmax_like).
- Masks are bool, True where a query may attend to a key; a fully masked query gets zero
  weights. It imports numpy and torch only: a worker runs it when a grader first sets one.

Symbols: B batch, L queries, S keys, d_model width, h heads, d_k = d_model // h, d_ff inner width.
Tables: docs/author/standins.md. Masks and sources:
docs/internals/notebook-mistakes.md#the-courses-stand-ins-file.
"""

import inspect
import math

import numpy as np
import torch
from torch import nn


class MultiHeadAttentionStandIn(nn.Module):
    """The contract's MultiHeadAttention: forward(query (B, L, d_model), key, value (B, S,
    d_model), mask=None) -> (output (B, L, d_model), weights (B, h, L, S))."""

    def __init__(self, d_model, num_heads, dropout, bias):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def forward(self, query, key, value, mask=None):
        B, L, d_model = query.shape
        Q, K, V = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, h, L, S)
        if mask is not None:
            allowed = torch.as_tensor(mask, dtype=torch.bool, device=scores.device)
            allowed = allowed.unsqueeze(1) if allowed.dim() == 3 else allowed
            scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~allowed, 0.0)  # a fully masked query: zeros
        weights = self.dropout(weights)
        concat = (weights @ V).transpose(1, 2).reshape(B, L, d_model)
        return self.W_o(concat), weights


class FeedForwardStandIn(nn.Module):
    """The contract's PositionwiseFeedForward: W_2(dropout(relu(W_1(x)))), x (..., d_model)."""

    def __init__(self, d_model, d_ff, dropout):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.W_2(self.dropout(torch.relu(self.W_1(x))))


class AddNormStandIn(nn.Module):
    """The contract's AddNorm: norm(x + dropout(sublayer_output)), both (..., d_model)."""

    def __init__(self, d_model, dropout, eps):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer_output):
        return self.norm(x + self.dropout(sublayer_output))


class EncoderLayerStandIn(nn.Module):
    """The contract's EncoderLayer, made of the stand-ins above: x (B, L, d_model) -> (B, L,
    d_model); x2 = add_norm_1(x, self_attn(x, x, x, mask)[0]), add_norm_2(x2,
    feed_forward(x2))."""

    def __init__(self, d_model, num_heads, d_ff, dropout, eps):
        super().__init__()
        self.self_attn = MultiHeadAttentionStandIn(d_model, num_heads, dropout, True)
        self.add_norm_1 = AddNormStandIn(d_model, dropout, eps)
        self.feed_forward = FeedForwardStandIn(d_model, d_ff, dropout)
        self.add_norm_2 = AddNormStandIn(d_model, dropout, eps)

    def forward(self, x, mask=None):
        x2 = self.add_norm_1(x, self.self_attn(x, x, x, mask)[0])
        return self.add_norm_2(x2, self.feed_forward(x2))


def softmax(x, axis=-1):
    """torch.softmax along `axis`, with zeros for a slice that is entirely -inf (torch gives NaN
    there; NaN stays NaN). A torch tensor gives a tensor (differentiable, its dtype kept);
    anything else a NumPy array, a floating x keeping its dtype, any other float64. Written
    with torch, not NumPy: a request that sets it carries its text, which learner code in the
    worker can read (autograder/runtime/harness/standin_custody.py), and the learner's own
    softmax is NumPy."""
    if isinstance(x, torch.Tensor):
        t = x
    else:
        a = np.asarray(x)
        a = a if np.issubdtype(a.dtype, np.floating) else a.astype(np.float64)
        t = torch.from_numpy(np.ascontiguousarray(a))
    blank = (t == -torch.inf).all(dim=axis, keepdim=True)
    safe = torch.where(blank, torch.zeros_like(t), t)  # no NaN, in the values or the gradient
    out = torch.where(blank, torch.zeros_like(t), torch.softmax(safe, dim=axis))
    return out if isinstance(x, torch.Tensor) else out.numpy()


def softmax_like(own):
    """The softmax stand-in called the way `own` (a learner's softmax) is called: its first
    parameter is x, its second (any name) the axis, with own's default; None when own takes
    other parameters too (a temperature, say), which the stand-in cannot honour."""
    try:
        signature = inspect.signature(own)
    except Exception:  # a __signature__ of the learner's making
        return None
    params = list(signature.parameters.values())
    plain = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY)
    if not 1 <= len(params) <= 2 or any(p.kind not in plain for p in params):
        return None
    if len(params) == 1 or params[1].default is inspect.Parameter.empty:
        default_axis = -1
    else:
        default_axis = params[1].default

    def softmax_standin(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        values = list(bound.arguments.values())
        return softmax(values[0], values[1] if len(values) > 1 else default_axis)

    return softmax_standin


KINDS = {
    "multi_head_attention": (
        MultiHeadAttentionStandIn,
        {"d_model": "int", "num_heads": "int", "dropout": "probability", "bias": "bool"},
    ),
    "feed_forward": (
        FeedForwardStandIn,
        {"d_model": "int", "d_ff": "int", "dropout": "probability"},
    ),
    "add_norm": (AddNormStandIn, {"d_model": "int", "dropout": "probability", "eps": "float"}),
    "encoder_layer": (
        EncoderLayerStandIn,
        {
            "d_model": "int",
            "num_heads": "int",
            "d_ff": "int",
            "dropout": "probability",
            "eps": "float",
        },
    ),
}
FUNCTIONS = {"softmax": softmax_like}
