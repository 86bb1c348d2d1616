"""Add & Norm and its common mistakes, from torch built-ins only.

`expected_and_mistakes(state, x, s, eps)` computes LayerNorm(x + s) with F.layer_norm from a
contract state dict (`norm.weight`, `norm.bias`) and what each catalogued mistake
(mistakes/add_norm.toml) would give instead, keyed by the sentence that names it; pass them to
`expect_close(..., mistakes=...)`. `dropout_in_eval` recognises an output that dropout, left
on in eval mode, would give. Never a reference solution: this ships with the visible graders.
Symbols: d_model width; ... any leading axes, e.g. (B, L).
Functions marked @expected_value are computed once per distinct arguments
(autograder/expected.py), so they stay pure functions of their arguments: no global random draws.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F

from autograder.expected import expected_value
from autograder.feedback import AnyOf, Lazy
from tests.graders.support.add_norm_params import fitted_eps
from tests.graders.support.catalogue import mistake

PRE_NORM = "add_norm/pre-norm"
NORM_WRONG_AXIS = "add_norm/norm-wrong-axis"
DROPOUT_IN_EVAL = "add_norm/dropout-in-eval"
NO_RESIDUAL = "add_norm/no-residual"
NO_SUBLAYER = "add_norm/no-sublayer"
NO_NORM = "add_norm/no-norm"
EPS_IGNORED = "add_norm/eps-ignored"
UNBIASED_VARIANCE = "add_norm/unbiased-variance"
EPS_OUTSIDE_SQRT = "add_norm/eps-outside-sqrt"
DROPOUT_AFTER_NORM = "add_norm/dropout-after-norm"
DROPOUT_MISSING = "add_norm/dropout-missing"
EPS_RTOL = 0.05  # a fitted eps this close to the one given is that eps

DEFAULT_EPS = 1e-5  # nn.LayerNorm's own default
OWN_EPS = (DEFAULT_EPS, 1e-6)  # what a LayerNorm class of a learner's own defaults to
MAX_DROPOUT_WIDTH = 16  # dropout_in_eval tries all 2**d_model keep patterns of a token


def expected_and_mistakes(
    state: Mapping[str, torch.Tensor],
    x: torch.Tensor,
    s: torch.Tensor,
    eps: float = DEFAULT_EPS,
    got: object = None,
) -> tuple[torch.Tensor, Lazy]:
    """(LayerNorm(x + s) (..., d_model), {sentence: what a mistake gives (..., d_model)}); the
    mistakes are a feedback.Lazy, computed only when read (expect_close reads them only when
    the learner's result is wrong). The expected value is one F.layer_norm: cheaper than a key
    of @expected_value's memo, so it is not memoised. got: the learner's result, when there is
    one: an eps other than `eps` is then recognised whatever its value (fitted to it)."""
    weight, bias = state["norm.weight"], state["norm.bias"]
    z = x.to(weight.dtype) + s.to(weight.dtype)
    expected = F.layer_norm(z, weight.shape, weight, bias, eps)
    return expected, Lazy(
        lambda: {**_mistakes(state, x, s, eps), **_other_eps(got, state, x, s, eps)}
    )


def _other_eps(got, state, x, s, eps: float) -> dict[str, torch.Tensor]:
    """{EPS_IGNORED: LayerNorm(x + s) with the eps the learner's output shows} when that eps is
    not `eps` (a default kept, or a number of the learner's own); {} otherwise."""
    if got is None:
        return {}
    fitted = fitted_eps(got, state, x, s, atol=1e-6)
    if fitted is None or abs(fitted - eps) <= EPS_RTOL * eps:
        return {}
    weight, bias = state["norm.weight"], state["norm.bias"]
    z = x.to(weight.dtype) + s.to(weight.dtype)
    return {mistake(EPS_IGNORED): F.layer_norm(z, weight.shape, weight, bias, fitted)}


@expected_value
def _mistakes(
    state: Mapping[str, torch.Tensor], x: torch.Tensor, s: torch.Tensor, eps: float
) -> dict[str, AnyOf]:
    """{sentence: what a mistake gives (..., d_model)}, as AnyOf."""
    weight, bias = state["norm.weight"], state["norm.bias"]
    x, s = x.to(weight.dtype), s.to(weight.dtype)

    def norm(y: torch.Tensor, eps: float = eps) -> torch.Tensor:
        return F.layer_norm(y, weight.shape, weight, bias, eps)

    z = x + s
    found = {
        PRE_NORM: [x + norm(s)],
        NO_RESIDUAL: [norm(s)],
        NO_SUBLAYER: [norm(x)],
        NO_NORM: [z],
        UNBIASED_VARIANCE: [_normalise(z, (-1,), weight, bias, eps, unbiased=True)],
        EPS_OUTSIDE_SQRT: [_normalise(z, (-1,), weight, bias, eps, outside=True)],
        # both at once, as the Annotated Transformer's LayerNorm: (z - mean) / (std + eps)
        (UNBIASED_VARIANCE, EPS_OUTSIDE_SQRT): [
            _normalise(z, (-1,), weight, bias, eps, unbiased=True, outside=True)
        ],
        NORM_WRONG_AXIS: [_normalise(z, (axis,), weight, bias, eps) for axis in range(z.dim() - 1)],
    }
    if z.dim() >= 2:  # every token of a sequence together: (L, d_model)
        found[NORM_WRONG_AXIS].append(_normalise(z, (-2, -1), weight, bias, eps))
    if eps != DEFAULT_EPS:
        found[EPS_IGNORED] = [norm(z, DEFAULT_EPS)]
    # all three, as hkproj/pytorch-transformer's LayerNormalization (eps fixed at 1e-6)
    found[(UNBIASED_VARIANCE, EPS_OUTSIDE_SQRT, EPS_IGNORED)] = [
        _normalise(z, (-1,), weight, bias, own, unbiased=True, outside=True)
        for own in OWN_EPS
        if own != eps
    ]
    return {_sentences(ids): AnyOf(*arrays) for ids, arrays in found.items()}


def _sentences(ids: str | tuple[str, ...]) -> str:
    """The sentence naming one mistake, or each of several made together."""
    return " ".join(mistake(i) for i in ((ids,) if isinstance(ids, str) else ids))


def _normalise(z, dims, weight, bias, eps, *, unbiased=False, outside=False) -> torch.Tensor:
    """(z - mean) / sqrt(var + eps) * weight + bias, mean and variance over `dims`; outside:
    (z - mean) / (std + eps) instead."""
    mean = z.mean(dim=dims, keepdim=True)
    var = z.var(dim=dims, keepdim=True, unbiased=unbiased)
    scale = torch.sqrt(var) + eps if outside else torch.sqrt(var + eps)
    return (z - mean) / scale * weight + bias


def dropout_in_eval(found: tuple[torch.Tensor, torch.Tensor] | None) -> dict[str, torch.Tensor]:
    """{sentence: LayerNorm(x + dropout(s))} when dropout_patterns `found` the learner's eval
    output to be dropout left on; {} otherwise."""
    return {} if found is None else {mistake(DROPOUT_IN_EVAL): found[0]}


@expected_value
def dropout_patterns(
    got: torch.Tensor,
    state: Mapping[str, torch.Tensor],
    x: torch.Tensor,
    s: torch.Tensor,
    p: float,
    eps: float = DEFAULT_EPS,
    atol: float = 1e-5,
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """(LayerNorm(x + dropout(s)) (..., d_model), the keep pattern of each token (tokens,
    d_model), 1 kept) when `got` is what dropout with probability p on s gives: for every token,
    some pattern of kept (scaled by 1/(1-p)) and dropped entries of s. Tries every pattern of
    each token (d_model <= 16), in the trusted process. None otherwise."""
    d_model = x.shape[-1]
    if d_model > MAX_DROPOUT_WIDTH or not 0 < p < 1 or tuple(got.shape) != tuple(x.shape):
        return None
    weight, bias = (state[f"norm.{n}"].to(torch.float64) for n in ("weight", "bias"))
    bits = torch.arange(2**d_model).unsqueeze(1) >> torch.arange(d_model)
    keep = (bits & 1).to(torch.float64)  # (2**d_model, d_model)
    rows = zip(
        *(t.detach().to(torch.float64).reshape(-1, d_model) for t in (got, x, s)), strict=True
    )
    matched, patterns = [], []
    for g, xi, si in rows:
        candidates = F.layer_norm(xi + keep / (1 - p) * si, (d_model,), weight, bias, eps)
        error = (candidates - g).abs().amax(dim=-1)
        best = int(error.argmin())
        if float(error[best]) > atol:
            return None
        matched.append(candidates[best])
        patterns.append(keep[best])
    return torch.stack(matched).reshape(x.shape), torch.stack(patterns)
