"""Dropout in train mode, checked without knowing which elements the learner's dropout drew.

Inverted dropout with probability p (nn.Dropout after .train()) sets each element of its input
to 0 or to the element / (1 - p). A grader knows, for each element of the learner's result,
what it must be in either case (`dropped`, `kept`), and checks that each element is one of the
two, and that both occur. Used by the feed-forward, multi-head attention and Add & Norm graders;
this ships with the visible graders. Symbols: ... any shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

P = 0.25  # the dropout probability of the train-mode tests: not nn.Dropout's default 0.5
DEFAULT_P = 0.5  # nn.Dropout()'s p, which a module that ignores its dropout argument uses
IGNORED_P = (
    "{what} in train mode drops with nn.Dropout's default probability 0.5, not the dropout it "
    "was given ({p:g}): pass it on, self.dropout = nn.Dropout(dropout)."
)
OTHER_P = (
    "{what} in train mode drops with probability {q:.3g}, not the dropout it was given ({p:g})"
)
# The hint of a train-mode test's first check, the same call in eval mode
EVAL_FIRST = "dropout in train mode is checked once the output in eval mode is right"


@dataclass(frozen=True)
class Fit:
    """How a result compares with inverted dropout: `fits` when every element is its dropped
    or its kept value; `dropped`/`kept`: how many elements (where the two values differ) are
    each."""

    fits: bool
    dropped: int
    kept: int

    @property
    def dropout_seen(self) -> bool:
        """Dropout as nn.Dropout does it: every element fits, some dropped, some kept."""
        return self.fits and self.dropped > 0 and self.kept > 0


def fit(got: torch.Tensor, dropped: torch.Tensor, kept: torch.Tensor, atol: float) -> Fit:
    """Compare `got` (...) with what each element is when dropped and when kept (each
    broadcastable to got's shape); a shape that differs does not fit."""
    got = got.detach().to(torch.float64)
    try:
        dropped, kept = (t.detach().to(torch.float64).expand_as(got) for t in (dropped, kept))
    except RuntimeError:  # shapes that do not broadcast
        return Fit(fits=False, dropped=0, kept=0)
    is_dropped = (got - dropped).abs() <= atol
    is_kept = (got - kept).abs() <= atol
    distinct = (kept - dropped).abs() > 10 * atol
    return Fit(
        fits=bool((is_dropped | is_kept).all()),
        dropped=int((is_dropped & ~is_kept & distinct).sum()),
        kept=int((is_kept & ~is_dropped & distinct).sum()),
    )


def fitted_p(got: torch.Tensor, dropped: torch.Tensor, base: torch.Tensor, atol: float):
    """The probability q for which every element of `got` is its `dropped` value or
    base / (1 - q), with some of each (inverted dropout with a probability of its own, such as
    a dropout fixed in the class instead of the one given); None when no q fits."""
    got64 = got.detach().to(torch.float64)
    try:
        dropped64, base64 = (t.detach().to(torch.float64).expand_as(got64) for t in (dropped, base))
    except RuntimeError:
        return None
    kept = ((got64 - dropped64).abs() > 10 * atol) & ((base64 - dropped64).abs() > 10 * atol)
    if not bool(kept.any()):
        return None
    scale = float(((got64 - dropped64)[kept] / (base64 - dropped64)[kept]).median())
    if not scale > 1.0:
        return None
    q = 1.0 - 1.0 / scale
    kept_value = dropped64 + (base64 - dropped64) * scale
    return q if fit(got64, dropped64, kept_value, atol).dropout_seen else None
