"""The position-wise feed-forward network and its common mistakes, from torch built-ins only.

`expected_and_mistakes(state, x)` computes W_2(relu(W_1 x)) from a contract state dict (the
learner's own weights, read back, or the weights a test loaded) with F.linear and F.relu, and
what each catalogued mistake (mistakes/feed_forward.toml) would give instead, keyed by the
sentence that names it; pass them to `expect_close(..., mistakes=...)`. Never a reference
solution: this ships with the visible graders. Symbols: d_model width, d_ff inner width.
Functions marked @expected_value are computed once per distinct arguments
(autograder/expected.py), so they stay pure functions of their arguments: no global random draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
import torch.nn.functional as F

from autograder.expected import expected_value
from autograder.feedback import AnyOf, Lazy, Satisfies
from tests.graders.support.catalogue import mistake
from tests.graders.support.params import is_norm_parameter

NO_RELU = "feed_forward/no-relu"
RELU_AFTER_SECOND_LINEAR = "feed_forward/relu-after-second-linear"
GELU = "feed_forward/gelu"
RESIDUAL_INSIDE = "feed_forward/residual-inside"
DROPOUT_MISSING = "feed_forward/dropout-missing"
DROPOUT_P_IGNORED = "feed_forward/dropout-p-ignored"
DROPOUT_AFTER_SECOND_LINEAR = "feed_forward/dropout-after-second-linear"
ADD_NORM_INSIDE = "feed_forward/add-norm-inside"


def _identity(y: torch.Tensor) -> torch.Tensor:
    return y


def expected_and_mistakes(
    state: Mapping[str, torch.Tensor], x: torch.Tensor
) -> tuple[torch.Tensor, Lazy]:
    """(W_2(relu(W_1 x)) (..., d_model), {sentence: what a mistake gives (..., d_model)}); the
    mistakes are a feedback.Lazy, computed only when read (expect_close reads them only when
    the learner's result is wrong). The expected value is two F.linear: cheaper than a key of
    @expected_value's memo, so it is not memoised."""
    found = Lazy(lambda: {**_mistakes(state, x), mistake(ADD_NORM_INSIDE): ADD_NORM_SEEN})
    return _forward(state, x, F.relu), found


def _forward(
    state: Mapping[str, torch.Tensor], x: torch.Tensor, activation: Callable, after=_identity
) -> torch.Tensor:
    """after(W_2(activation(W_1 x))), in the state's dtype."""
    x = x.to(state["W_1.weight"].dtype)
    with torch.no_grad():
        hidden = activation(F.linear(x, state["W_1.weight"], state["W_1.bias"]))
        return after(F.linear(hidden, state["W_2.weight"], state["W_2.bias"]))


@expected_value
def _mistakes(state: Mapping[str, torch.Tensor], x: torch.Tensor) -> dict[str, object]:
    """{sentence: what a mistake gives (..., d_model)}."""

    def forward(activation: Callable, after: Callable = _identity) -> torch.Tensor:
        return _forward(state, x, activation, after)

    mistakes = {
        mistake(NO_RELU): forward(_identity),
        # A ReLU after W_2 as well, or moved there (none between): one mistake, two results.
        mistake(RELU_AFTER_SECOND_LINEAR): AnyOf(
            forward(F.relu, F.relu), forward(_identity, F.relu)
        ),
        mistake(GELU): AnyOf(forward(F.gelu), forward(_tanh_gelu)),
        # H44: x + W_2(relu(W_1 x)), the residual of Add & Norm added here too
        mistake(RESIDUAL_INSIDE): forward(F.relu, lambda y: y + x.to(y.dtype)),
    }
    return mistakes


def _tanh_gelu(y: torch.Tensor) -> torch.Tensor:
    return F.gelu(y, approximate="tanh")


def normalised_per_token(have) -> bool:
    """Each token (last axis, more than one feature) has mean 0 and standard deviation 1: a
    LayerNorm (weight 1, bias 0, as freshly made) ended the computation."""
    y = torch.as_tensor(have, dtype=torch.float64)
    if y.dim() == 0 or y.shape[-1] < 2:
        return False
    mean, std = y.mean(dim=-1), y.std(dim=-1, unbiased=False)
    return bool((mean.abs() < 1e-4).all() and ((std - 1).abs() < 1e-2).all())


ADD_NORM_SEEN = Satisfies(normalised_per_token)


def parameter_mistakes(got: list[tuple], wanted: list[tuple]) -> list[str]:
    """Catalogue sentences for parameters `got` [(name, shape)] that are not the contract's
    `wanted`: a LayerNorm of the feed-forward's own (support.params.expect_parameters)."""
    extra = {name for name, _ in got} - {name for name, _ in wanted}
    return [mistake(ADD_NORM_INSIDE)] if any(is_norm_parameter(name) for name in extra) else []
