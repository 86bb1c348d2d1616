"""Calls that keep failing the same costly way are not run again (``[limits] hang_strikes``).

A call that runs out of time costs its whole budget, and the next test starts a fresh worker
that imports the learner's modules again: a function that always hangs would cost every test
that calls it. After it ran out of time in ``limit`` tests, later calls with the same label
fail at once, without starting a worker.
"""

from __future__ import annotations


class Strikes:
    """Counts, per call label ("softmax(...)"), the tests in which it ran out of time."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._count: dict[str, int] = {}

    def count(self, label: str) -> int:
        return self._count.get(label, 0)

    def add(self, label: str) -> None:
        self._count[label] = self.count(label) + 1

    def struck_out(self, label: str) -> bool:
        return self.count(label) >= self.limit

    def labels_out(self) -> list[str]:
        """The labels no longer run, for a fused request to stop before them."""
        return [label for label, count in self._count.items() if count >= self.limit]
