"""An AddNorm's LayerNorm as the learner built it: its parameter names, seeded weights for them,
its eps, and the eps its output shows.

The contract's `norm` is `nn.LayerNorm(d_model, eps=eps)`, with parameters `norm.weight` and
`norm.bias`. A LayerNorm class of the learner's own (the Annotated Transformer's a_2/b_2,
`gamma`/`beta`, `scale`/`shift`) is one mistake, named by the parameter test; the numeric tests
still grade what it computes, with weights loaded under the learner's own names (the first
(d_model,) parameter of `norm` taken as the weight, the second as the bias, unless their names
say otherwise: TensorFlow's ln creates beta before gamma), so that one mistake
costs only the test that tests it. Symbols: d_model width; ... any leading axes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from autograder.feedback import expect, shown_what
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.catalogue import mistake
from tests.graders.support.inputs import array
from tests.graders.support.params import WRONG_PARAMETERS, difference, scale_then_shift

CUSTOM_LAYER_NORM = "add_norm/custom-layer-norm"
CONTRACT = ("norm.weight", "norm.bias")
LISTED = ("norm.bias", "norm.weight")  # as the parameters sentence lists them


@dataclass(frozen=True)
class NormNames:
    """The learner's names for the LayerNorm's weight and bias ("norm.weight", "norm.bias" in
    the contract); `custom` when they are other names."""

    weight: str
    bias: str

    @property
    def custom(self) -> bool:
        return (self.weight, self.bias) != CONTRACT

    @property
    def module(self) -> str:
        """The attribute that holds them ("norm" in the contract)."""
        return self.weight.rsplit(".", 1)[0]


def norm_names(learner, module, d_model: int, *, what: str) -> NormNames:
    """The learner's LayerNorm parameter names: the contract's, or any two (d_model,)
    parameters (a LayerNorm of the learner's own, or one under another attribute: the weight
    first, unless the names say which is which, as gamma and beta do); GradingFailure (the
    parameters sentence) when its parameters are neither. The parameter test names the
    difference; the numbers are graded all the same."""
    got = [(p.name, tuple(p.shape)) for p in learner.parameters(module)]
    if sorted(got) == sorted((name, (d_model,)) for name in CONTRACT):
        return NormNames(*CONTRACT)
    own = [name for name, shape in got if shape == (d_model,)]
    expect(len(own) == len(got) == 2, wrong_parameters(got, d_model, what=what))
    return NormNames(*scale_then_shift(own))


def wrong_parameters(got: list[tuple[str, tuple]], d_model: int, *, what: str) -> str:
    """The parameters sentence for an AddNorm whose parameters `got` [(name, shape)] are not
    the contract's; a LayerNorm class of the learner's own (two (d_model,) parameters of `norm`
    under other names) is named."""
    wanted = [(name, (d_model,)) for name in LISTED]
    listing = f"norm.bias ({d_model},), norm.weight ({d_model},)"
    sentence = WRONG_PARAMETERS.format(
        what=shown_what(what), difference=difference(got, wanted), expected=listing
    )
    own = [name for name, shape in got if name.startswith("norm.") and shape == (d_model,)]
    if len(own) == len(got) == 2:
        return f"{sentence} {mistake(CUSTOM_LAYER_NORM)}"
    return f"{sentence} Hint: create self.norm = nn.LayerNorm(d_model, eps=eps)."


def seeded_norm_state(
    rng: np.random.Generator, names: NormNames, d_model: int
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(weights under the learner's names, the same under the contract's names): the weight
    near 1, the bias near 0 (float32)."""
    weight = torch.from_numpy(1.0 + 0.2 * array(rng, d_model)).float()
    bias = torch.from_numpy(0.1 * array(rng, d_model)).float()
    return {names.weight: weight, names.bias: bias}, {"norm.weight": weight, "norm.bias": bias}


def norm_eps(module, names: NormNames) -> float | None:
    """The `eps` the learner's LayerNorm (module.<names.module>) says it has, or None when
    reading it fails (a class of the learner's own may have none): the numbers, not this
    attribute, are graded."""
    try:
        value = getattr(module, names.module).eps
    except LearnerError:
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def fitted_eps(got, state, x, s, *, atol: float) -> float | None:
    """The eps for which F.layer_norm(x + s) with the state's weights gives `got`, or None when
    no eps does (within atol): for each token, u = (got - bias) / weight is (z - mean) /
    sqrt(var + eps), so mean(u^2) = var / (var + eps)."""
    weight, bias = (state[f"norm.{n}"].detach().to(torch.float64) for n in ("weight", "bias"))
    try:
        have = torch.as_tensor(got).detach().to(torch.float64)
    except (TypeError, RuntimeError):
        return None
    z = x.to(torch.float64) + s.to(torch.float64)
    if have.shape != z.shape:
        return None
    u = (have - bias) / weight
    var = z.var(dim=-1, unbiased=False)
    ratio = (u * u).mean(dim=-1)
    if not bool(torch.isfinite(ratio).all()) or not bool((ratio > 0).all()):
        return None
    eps = float(torch.clamp(var / ratio - var, min=0.0).median())
    fit = F.layer_norm(z, weight.shape, weight, bias, eps)
    return eps if bool(((fit - have).abs() <= atol).all()) else None
