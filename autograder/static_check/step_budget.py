"""The step budget of one submission's static check: its cost is bounded, whatever the source.

The check runs in the trusted harness before any learner code, where no time-out of the
learner's applies, so what it spends on a submission must not grow with how the learner chains
their code. Every resolution of a name or an expression (resolve.Resolver.origins) is one
step, counted over all the package's modules; when STEPS are spent the check stops and the
learner is flagged for review (a count, not a clock: the same source always ends the same way).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Resolution steps one submission's static check may take. The course's references take about
#: 1,300 in all and 1.5 MB of chained one-line helpers about 200,000; a step costs microseconds.
STEPS = 1_000_000


class BudgetSpent(Exception):
    """The static check of a submission used up its step budget."""


@dataclass
class StepBudget:
    """Steps left for one submission's static check (shared by its modules' resolvers)."""

    limit: int = STEPS
    used: int = 0

    def spend(self) -> None:
        """Take one step; raises BudgetSpent when none is left."""
        self.used += 1
        if self.used > self.limit:
            raise BudgetSpent(f"the static check took more than {self.limit} steps")
