"""What one test's learner code did besides returning values: output, forbidden calls, time."""

from __future__ import annotations

from dataclasses import dataclass, field

Record = tuple[str, str, int]
TRUNCATED = "\n[... output of this test truncated]\n"


@dataclass(frozen=True)
class TestTrace:
    """Returned by LearnerSession.end_test().

    Attributes:
        output: the learner's stdout and stderr during the test, capped at ``output_kb``.
        forbidden: (api, file relative to the package dir, line) recorded during the test.
        timed_out: a call of the test ran out of the test's time budget.
    """

    output: str
    forbidden: tuple[Record, ...]
    timed_out: bool


@dataclass
class TestState:
    """The running test: its remaining time budget and what it collected so far."""

    name: str
    remaining: float  # CPU seconds of the worker (runtime/harness/cpu_time.py)
    output_cap: int
    wall_remaining: float = float("inf")  # wall-clock seconds, however little it computed
    output: list[str] = field(default_factory=list)
    output_chars: int = 0
    forbidden: list[Record] = field(default_factory=list)
    timed_out: bool = False

    def add_output(self, text: str) -> None:
        if not text or self.output_chars >= self.output_cap:
            return
        kept = text[: self.output_cap - self.output_chars]
        self.output.append(kept)
        self.output_chars += len(kept)
        if len(kept) < len(text):
            self.output.append(TRUNCATED)

    def add_forbidden(self, record: Record) -> None:
        if record not in self.forbidden:
            self.forbidden.append(record)

    def finish(self) -> TestTrace:
        return TestTrace("".join(self.output), tuple(self.forbidden), self.timed_out)
