"""Comparing a MultiHeadAttention call's (output, weights) with the expected pair, naming a
known mistake when the result matches one, and otherwise saying where it first differs."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from autograder.feedback import (
    KNOWN_MISTAKE,
    KNOWN_MISTAKES,
    GradingFailure,
    Lazy,
    expect,
    expect_close,
    expect_type,
    shown_what,
)
from tests.graders.support.divergence import FOUND, locate
from tests.graders.support.mha_mistakes import dropout_in_eval, mha_mistakes

# "Known mistake in ", "Known mistakes in ": one named mistake, or several told apart by none
_KNOWN = (KNOWN_MISTAKE.split("{")[0], KNOWN_MISTAKES.split("{")[0])
FOUND_PREFIX = FOUND.split("{")[0]  # "First difference found at "


def output_of(got: object, *, what: str) -> torch.Tensor:
    """The output tensor of an (output, weights) pair a MultiHeadAttention call returned,
    failing with a sentence when the call returned something else (a lone tensor, a string)."""
    expect_type(got, tuple, what=what)
    shown = shown_what(what)  # a hidden test shows no inputs
    expect(len(got) == 2, f"{shown} returned {len(got)} values; expected 2: (output, weights).")
    expect_type(got[0], torch.Tensor, what=f"the output of {what}")
    return got[0]


def expect_mha_pair(
    got: object,
    expected: tuple,
    *,
    state: Mapping[str, torch.Tensor],
    heads: int,
    inputs: tuple,
    what: str,
    atol: float,
    hints: tuple[str | None, str | None] = (None, None),
    dropout: float = 0.0,
) -> None:
    """Check that `got` is an (output (B, L, d_model), weights (B, h, L, S)) pair of tensors
    equal to `expected`: the weights first (the usual place of a mistake), then the output.

    state: the contract state dict loaded into the learner's module; inputs: (query, key,
    value, mask) of the call. A wrong shape or value that matches a catalogued mistake
    (support.mha_mistakes) names it; a wrong value that matches none gets one more sentence
    saying where the computation first differs (support.divergence). hints: (output, weights).
    dropout: the module's dropout probability (a module in eval mode must not drop anything).
    """
    expect_type(got, tuple, what=what)
    shown = shown_what(what)  # a hidden test shows no inputs
    expect(len(got) == 2, f"{shown} returned {len(got)} values; expected 2: (output, weights).")
    mistakes = mha_mistakes(state, heads, *inputs)  # Lazy: computed only for a wrong result
    if dropout:
        catalogued = mistakes

        def with_dropout() -> tuple[dict, dict]:
            dropped = dropout_in_eval(state, heads, inputs, got[1], dropout, atol)
            pairs = zip(catalogued, dropped, strict=True)
            return tuple({**found, **more} for found, more in pairs)

        mistakes = Lazy.pair(with_dropout)
    for index, name in ((1, "weights"), (0, "output")):
        label = f"the {name} of {what}"
        expect_type(got[index], torch.Tensor, what=label)
        try:
            expect_close(
                got[index], expected[index], what=label, atol=atol, mistakes=mistakes[index]
            )
        except GradingFailure as failure:
            message = _explained(failure.message, got, state, heads, inputs, atol, hints[index])
            raise GradingFailure(message) from None


def _explained(message, got, state, heads, inputs, atol, hint) -> str:
    """The failure as expect_close wrote it; unless it names a known mistake, followed by where
    the computation first differs and the hint."""
    if any(known in message for known in _KNOWN):
        return message
    sentences = [message]
    where = locate(state, heads, *inputs, got[0], got[1], atol=atol)
    if where:
        sentences.append(where)
    if hint and not (where or "").startswith(FOUND_PREFIX):  # a found step says more
        sentences.append(f"Hint: {hint.rstrip('.')}.")
    return " ".join(sentences)
