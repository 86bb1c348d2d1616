"""Calls that keep failing the costly way are not run again (``[limits] hang_strikes``).

A call that runs out of time costs its whole budget, and one that crashes the worker costs a
fresh worker; either way the next test starts a worker that imports the learner's modules
again (a module that sleeps at import pays that sleep each time). A function that always hangs
or always crashes would cost every test that calls it. After it ran out of time or crashed in
``limit`` tests, later calls with the same label fail at once, without starting a worker.
"""

from __future__ import annotations


class Strikes:
    """Counts, per call label ("softmax(...)"), the tests in which it ran out of time or
    crashed, and whether it ever crashed (the sentence names what happened)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._count: dict[str, int] = {}
        self._crashed: set[str] = set()

    def count(self, label: str) -> int:
        return self._count.get(label, 0)

    def add(self, label: str, *, crashed: bool = False) -> None:
        self._count[label] = self.count(label) + 1
        if crashed:
            self._crashed.add(label)

    def crashed(self, label: str) -> bool:
        """Whether a strike of ``label`` was a crash (else all were time-outs)."""
        return label in self._crashed

    def struck_out(self, label: str) -> bool:
        return self.count(label) >= self.limit

    def labels_out(self) -> list[str]:
        """The labels no longer run, for a fused request to stop before them."""
        return [label for label, count in self._count.items() if count >= self.limit]
