"""What one test's learner code did besides returning values: output, forbidden calls, time."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: (api, file, line) of a forbidden call, or (api, file, line, within) of one the worker saw
#: made by the code of the forbidden API ``within`` (worker/guard.py): evidence the harness
#: weighs, never a record removed by the worker's say alone.
Record = tuple[str, str, int] | tuple[str, str, int, str]
TRUNCATED = "\n[... output of this test truncated]\n"


@dataclass(frozen=True)
class TestTrace:
    """Returned by LearnerSession.end_test().

    Attributes:
        output: the learner's stdout and stderr during the test, capped at ``output_kb``.
        forbidden: (api, file relative to the package dir, line[, within]) recorded during
            the test.
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


def from_wire(entry: Any) -> Record:
    """A record as the worker sent it, rebuilt of plain values (TypeError or ValueError when it
    is not one: the answer is then garbled)."""
    api, file, line, *within = entry
    if len(within) > 1 or (within and not within[0]):
        raise ValueError("not a forbidden call's record")
    return (str(api), str(file), int(line), *(str(outer) for outer in within))


def unexplained(records: Iterable[Record], seen: Iterable[Record]) -> list[Record]:
    """``records`` but those made inside a forbidden API that ``seen`` holds a call of (made
    by learner code, or itself inside one that is): that call is the learner's use. A
    record inside an API no call of which is seen stays, so no call is left untold."""
    records, told = list(records), {record[0] for record in seen if len(record) == 3}
    nested = [record for record in seen if len(record) == 4]
    while True:
        more = {record[0] for record in nested if record[3] in told} - told
        if not more:
            break
        told |= more
    return [record for record in records if len(record) == 3 or record[3] not in told]
