"""Waiting for the worker's answer to one request, within the call's CPU and wall budgets.

The harness sends the request, then waits for a frame that is not a progress frame: for what
is left of the call's CPU budget by the count of the worker's process tree (cpu_time.py), until
the wall limit, which grows by the time the tree waited for a CPU during the call and never
passes what is left of the submission's wall budget. A call stopped at the wall limit is told
by what the counts show (`Wait.machine_busy`).

Design, and why learner code gains no time by it:
docs/internals/runtime.md#cpu-time-and-the-wall-limit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from autograder.runtime.harness import cpu_time
from autograder.runtime.harness.part_labels import PartLabels, ProgressFrames
from autograder.runtime.harness.worker_handle import WorkerHandle

#: Seconds of the first wait before the tree's run-queue time is read: a call answered sooner
#: (nearly all of them) costs no read of /proc; the run-queue time of those first seconds is
#: not counted, which only makes the wall limit grow less.
PROBE = 0.05
#: Seconds each later wait lasts at least, so that a wall limit that keeps growing a little
#: while the call is starved is not re-read in a busy loop.
SETTLE = 0.01


@dataclass(frozen=True)
class CallClock:
    """The budgets of one call, in seconds: the CPU time it may use, the wall time its test
    (or import) gives it, the wall time left of the submission's budget, and the worker's CPU
    time when the call starts (None: not known, then the wall clock is the limit)."""

    cpu: float
    wall: float
    submission: float
    baseline: float | None

    @property
    def starved_cap(self) -> float:
        """The most the wall limit grows by for time the call waited for a CPU."""
        return self.cpu * cpu_time.STARVED_FACTOR


@dataclass
class Wait:
    """How waiting for one answer ended, and what the worker's tree did meanwhile."""

    label: str
    answered: bool = False
    frame: bytes | None = None
    bytes_read: int = 0  # of every frame read, progress frames included
    too_large: bool = False
    waiting: bool = False  # the wall limit passed before the CPU budget was used
    cut: bool = False  # the submission's wall budget ran out first
    elapsed: float = 0.0  # wall seconds, when the wait ran out
    computed: float | None = None  # CPU seconds the tree used in the call, when measured
    starved: float | None = None  # seconds its threads waited for a CPU, when measured
    grown: float = 0.0  # seconds the wall limit grew by for that waiting

    def machine_busy(self, clock: CallClock) -> bool:
        """Whether a call stopped at the wall limit was stopped by the machine, not by itself:
        it waited for a CPU for the whole growth the wall limit allows, and without that time
        (what it computed and slept) it stayed under its wall limit, so on a machine with a CPU
        free it would not have been stopped yet. A call that waited for a CPU for less than
        the cap was given all that time back: what stopped it is its own computing and sleeping
        (it slept for more than the wall limit's margin over the CPU budget)."""
        if not self.waiting or self.cut or self.starved is None:
            return False
        return self.starved >= clock.starved_cap and self.elapsed - self.starved < clock.wall


def wait_for_answer(
    worker: WorkerHandle,
    request: bytes,
    wait: Wait,
    clock: CallClock,
    part_labels: PartLabels | None,
    max_frame: int,
) -> Wait:
    """Send ``request`` (a wire frame) to ``worker``, then wait for a frame that is not a
    progress frame within ``clock``'s budgets; ``wait`` (named after the call) says how it
    ended. A frame longer than ``max_frame`` bytes is refused (``too_large``)."""
    meter = _Meter(worker.process.pid, clock, time.monotonic())
    progress, give_up, sent = ProgressFrames(), meter.first_give_up(), False
    while True:
        try:
            if not sent:
                worker.conn.send_bytes(request)
                sent = True
            wait.answered = worker.conn.poll(max(give_up - time.monotonic(), 0.0))
        except OSError:
            wait.answered = True  # the worker is gone; recv_bytes below reports how
        if not wait.answered:
            give_up = meter.more(wait)
            if give_up is not None:
                continue
            return wait
        try:
            wait.frame = worker.conn.recv_bytes(max_frame)
            wait.bytes_read += len(wait.frame)
        except (EOFError, OSError) as error:
            # multiprocessing's refusal of a longer frame (the worker's own check let a
            # value through that is larger than it counted): not the worker's death
            wait.too_large = str(error) == "bad message length"
            wait.frame = None
            return wait
        if part_labels is None or not progress.read(wait.frame, part_labels):
            return wait
        wait.label = part_labels.label(progress.part, progress.type_name) or wait.label


class _Meter:
    """The counts of one call's tree while its answer is awaited (module docstring)."""

    def __init__(self, pid: int, clock: CallClock, started: float) -> None:
        self.pid, self.clock, self.started = pid, clock, started
        self.run_queue_start: float | None = None
        self.probed = False
        self.budget_end = started + min(clock.cpu, clock.wall, clock.submission)

    def first_give_up(self) -> float:
        return min(self.budget_end, self.started + PROBE)

    def more(self, wait: Wait) -> float | None:
        """When the next wait ends, or None: the CPU budget is spent or the wall limit
        passed (``wait`` then holds the counts and how it ended)."""
        if not self.probed:  # the probe ran out: from now on run-queue time counts
            self.probed = True
            self.run_queue_start = cpu_time.tree_run_queue_seconds(self.pid)
            if time.monotonic() < self.budget_end:
                return self.budget_end
        clock, now = self.clock, time.monotonic()
        wall_end = self.started + min(clock.wall + self._grown(wait), clock.submission)
        cpu_left = self._cpu_left(wait)
        wait.elapsed = now - self.started
        if cpu_left > 0 and now < wall_end:
            wait.waiting = True  # the worker has not computed for its whole budget yet
            return now + max(min(cpu_left, wall_end - now), SETTLE)
        wait.waiting = wait.waiting and now >= wall_end
        wait.cut = wait.elapsed >= clock.submission - 0.05 and clock.submission < (
            clock.wall + wait.grown
        )
        return None

    def _grown(self, wait: Wait) -> float:
        """Seconds the wall limit has grown by: the run-queue time since the probe (the
        largest seen: threads that end take theirs with them), up to the cap."""
        if self.run_queue_start is not None:
            now = cpu_time.tree_run_queue_seconds(self.pid)
            if now is not None:
                wait.starved = max(wait.starved or 0.0, now - self.run_queue_start)
                wait.grown = min(wait.starved, self.clock.starved_cap)
        return wait.grown

    def _cpu_left(self, wait: Wait) -> float:
        """CPU seconds left of the budget by the tree's count; 0 when spent, or when it
        cannot be counted (then the wall clock is the limit)."""
        baseline = self.clock.baseline
        used = cpu_time.tree_seconds(self.pid) if baseline is not None else None
        if used is None or baseline is None:
            return 0.0
        wait.computed = max(used - baseline, 0.0)
        left = self.clock.cpu - wait.computed
        return left if left > max(self.clock.cpu * cpu_time.SLACK, 0.01) else 0.0
