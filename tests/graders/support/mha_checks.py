"""Checks of a learner MultiHeadAttention that name a catalogued mistake from what they see: an
indivisible width not refused, parameters that show a bias ignored or a LayerNorm inside, a
mask error that shows its layout, and dropout in train mode (where it acts, which weights are
returned). Symbols: B batch, L queries, S keys, d_model width, h heads, d_k = d_model // h,
p the dropout probability.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F

from autograder.feedback import GradingFailure, expect_raises
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.catalogue import mistake
from tests.graders.support.mistakes import hint_on_error
from tests.graders.support.params import expect_parameters, is_norm_parameter, linear_parameters

INDIVISIBLE = "multi_head_attention/indivisible-not-refused"
BIAS_IGNORED = "multi_head_attention/bias-ignored"
ADD_NORM_INSIDE = "multi_head_attention/add-norm-inside"
MASK_NO_HEAD_AXIS = "multi_head_attention/mask-no-head-axis"
MASK_HEAD_AXIS_ALWAYS = "multi_head_attention/mask-head-axis-always"
HEADS_FIRST = "multi_head_attention/heads-first"
MAX_PATTERNS = 64  # a row's dropout patterns tried at most (2**S)


def expect_refuses_indivisible(MHA, d_model: int, heads: int, *, what: str) -> None:
    """MHA(d_model, heads) raises ValueError; an AssertionError, or nothing, names the mistake."""
    try:
        expect_raises("ValueError", MHA, d_model, heads, what=what)
    except GradingFailure as failure:
        raise GradingFailure(f"{failure.message} {mistake(INDIVISIBLE)}") from None


def parameter_mistakes(got: list[tuple], wanted: list[tuple]) -> list[str]:
    """Catalogue sentences for MultiHeadAttention parameters `got` [(name, shape)] other than
    `wanted` (support.params.expect_parameters): biases missing or extra, a LayerNorm."""
    got_names, wanted_names = {n for n, _ in got}, {n for n, _ in wanted}
    found = []
    biases = {n for n in got_names ^ wanted_names if n.startswith("W_") and n.endswith(".bias")}
    if biases:
        found.append(mistake(BIAS_IGNORED))
    if any(is_norm_parameter(name) for name in got_names - wanted_names):
        found.append(mistake(ADD_NORM_INSIDE))
    return found


def build(MHA, learner, d_model: int, heads: int, *, state, what: str, **kwargs):
    """MHA.build(d_model, heads, state=state, **kwargs) (the learner's module in eval mode with
    the contract's weights); when the weights do not load, the parameters sentence, naming
    what the difference shows, instead of torch's loading error."""
    try:
        return MHA.build(d_model, heads, state=state, **kwargs)
    except LearnerError as error:
        if "load_state_dict" not in error.feedback:
            raise
        failed = error
    m = MHA(d_model, heads, **kwargs)
    shapes = {n: (d_model, d_model) for n in ("W_q", "W_k", "W_v", "W_o")}
    expected = linear_parameters(shapes, kwargs.get("bias", True))
    expect_parameters(learner, m, expected, what=what, named=parameter_mistakes)
    raise failed  # the parameters are the contract's: torch's own sentence says why


@contextmanager
def mask_hints(mask, heads: int, query) -> Iterator[None]:
    """Name a mask laid out on the wrong axis when the learner's call fails on it: a (B, L, S)
    mask used as it is meets the heads axis ("size of tensor a (B) must match ... (h)"); an
    (L, S) mask given a head axis meets it with its rows; a (B, h, L, S) mask given one more,
    (B, 1, h, L, S), makes the scores 5-D, B times too large for the merge of the heads; a
    (B, h, L, S) mask meeting scores laid out head-first, (h, B, L, S), fails on h and B."""
    m = None if mask is None else torch.as_tensor(mask)
    if m is None or heads < 2 or m.dim() not in (2, 3, 4):
        yield
        return
    if m.dim() == 4:
        B, L, d_model = query.shape
        when = f"invalid for input of size {B * B * L * d_model}"
        swapped = ("must match", f"({heads})", f"({B})")  # scores (h, B, L, S)
        with (
            hint_on_error(mistake(MASK_HEAD_AXIS_ALWAYS), when=when),
            _heads_first_hint(B, heads, swapped),
        ):
            yield
        return
    size = m.shape[0]
    if size == heads:
        yield
        return
    slug = MASK_NO_HEAD_AXIS if m.dim() == 3 else MASK_HEAD_AXIS_ALWAYS
    with hint_on_error(mistake(slug), when=("must match", f"({size})", f"({heads})")):
        yield


@contextmanager
def _heads_first_hint(batch: int, heads: int, when: tuple[str, ...]) -> Iterator[None]:
    """Name heads laid out head-first when a (B, h, L, S) mask fails on the sizes of the batch
    and head axes (only when they differ: the message then tells them apart)."""
    if batch == heads:
        yield
        return
    with hint_on_error(mistake(HEADS_FIRST), when=when):
        yield


def rows_from_dropped_weights(output, weights, state, heads: int, value, p: float) -> bool:
    """Whether `output` (B, L, d_model) is the contract's output for some dropout of `weights`
    (B, h, L, S): each head's row a pattern of kept (scaled by 1/(1-p)) and dropped weights.
    W_o (random, hence invertible) is undone, then each row's patterns tried (S <= 6)."""
    B, h, L, S = weights.shape
    if 2**S > MAX_PATTERNS or tuple(output.shape) != (B, L, h * (value.shape[-1] // h)):
        return False
    w = weights.detach().to(torch.float64) / (1 - p)
    o = output.detach().to(torch.float64)
    W_o, b_o = state["W_o.weight"].to(torch.float64), state.get("W_o.bias")
    if b_o is not None:
        o = o - b_o.to(torch.float64)
    concat = torch.linalg.solve(W_o, o.transpose(-1, -2)).transpose(-1, -2)  # (B, L, d_model)
    heads_out = concat.view(B, L, h, -1).transpose(1, 2)  # (B, h, L, d_k)
    V = F.linear(value.to(torch.float64), state["W_v.weight"].to(torch.float64), _bias(state))
    V = V.view(B, S, h, -1).transpose(1, 2)  # (B, h, S, d_k)
    keep = torch.tensor(list(itertools.product((0.0, 1.0), repeat=S)), dtype=torch.float64)
    candidates = (keep.view(1, 1, 1, -1, S) * w.unsqueeze(3)) @ V.unsqueeze(2)  # (B,h,L,P,d_k)
    error = (candidates - heads_out.unsqueeze(3)).abs().amax(dim=-1).amin(dim=-1)  # (B, h, L)
    return bool((error <= 1e-4).all())


def _bias(state) -> torch.Tensor | None:
    bias = state.get("W_v.bias")
    return None if bias is None else bias.to(torch.float64)
