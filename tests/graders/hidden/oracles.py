"""Hidden-only helpers: gradients of the reference (which never ships) and their comparison."""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn

from autograder.feedback import expect_close


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
