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
