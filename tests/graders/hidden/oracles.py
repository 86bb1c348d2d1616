"""Hidden-only helpers: reference gradients and the multi-head mistakes that need a full
re-implementation to reproduce (kept out of support/, which ships to learners).

Symbols: B batch, L queries, S keys, d_model width, h heads, d_k = d_model // h.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F
from torch import nn

from autograder.feedback import expect_close
from tests.graders.support.mistakes import Mistakes, split_pairs

SPLIT_WITHOUT_TRANSPOSE = (
    "you split the heads with a plain reshape to (B, h, L, d_k), which mixes the features of "
    "different tokens; use .view(B, L, h, d_k).transpose(1, 2)"
)
MERGE_WITHOUT_TRANSPOSE = (
    "you merged the heads with a plain reshape of (B, h, L, d_k) to (B, L, d_model), which "
    "mixes tokens; use .transpose(1, 2).reshape(B, L, d_model)"
)


def reference_grads(module: nn.Module, *args, cotangent: torch.Tensor) -> dict:
    """{name: gradient} of (first output * cotangent).sum() for a reference module."""
    module.zero_grad(set_to_none=True)
    out = module(*args)
    out = out[0] if isinstance(out, tuple) else out
    (out * cotangent).sum().backward()
    return {name: p.grad for name, p in module.named_parameters()}


def expect_grads_match(got: Mapping, expected: Mapping, *, what: str, atol: float) -> None:
    """Each learner gradient equals the reference's, parameter by parameter."""
    for name, grad in expected.items():
        expect_close(
            got.get(name),
            grad,
            what=f"the gradient of {name} after a backward pass through {what}",
            atol=atol,
            hint="gradients follow from the forward pass, so fix any forward mismatch first; "
            "otherwise keep the forward a differentiable torch computation (no .detach(), no "
            "numpy round trip, no in-place edits of inputs)",
        )


def mha_split_mistakes(
    state: Mapping[str, torch.Tensor],
    heads: int,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> Mistakes:
    """({sentence: output}, {sentence: weights}) of the plain-reshape split and merge mistakes."""
    found = {
        SPLIT_WITHOUT_TRANSPOSE: _mha(state, heads, query, key, value, mask, split_ok=False),
        MERGE_WITHOUT_TRANSPOSE: _mha(state, heads, query, key, value, mask, merge_ok=False),
    }
    return split_pairs(found)


def _mha(state, heads, query, key, value, mask, *, split_ok=True, merge_ok=True):
    B, L, d_model = query.shape
    d_k = d_model // heads

    def project(x, name):
        return F.linear(x, state[f"{name}.weight"], state.get(f"{name}.bias"))

    def split(x):  # (B, T, d_model) -> (B, h, T, d_k)
        T = x.shape[1]
        if split_ok:
            return x.view(B, T, heads, d_k).transpose(1, 2)
        return x.reshape(B, heads, T, d_k)

    with torch.no_grad():
        Q, K, V = (
            split(project(query, "W_q")),
            split(project(key, "W_k")),
            split(project(value, "W_v")),
        )
        scores = Q @ K.transpose(-2, -1) / d_k**0.5  # (B, h, L, S)
        if mask is not None:
            m = mask.bool().unsqueeze(1) if mask.dim() == 3 else mask.bool()
            scores = scores.masked_fill(~m, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))  # (B, h, L, S)
        heads_out = weights @ V  # (B, h, L, d_k)
        if merge_ok:
            heads_out = heads_out.transpose(1, 2)
        return project(heads_out.reshape(B, L, d_model), "W_o"), weights
