"""How long one request to the worker may take (cpu_time.py says how the time is counted).

A call in a test may use what is left of the test's CPU budget (``[limits] test_timeout``), up
to cpu_time.WALL_FACTOR times as many seconds of wall time, not counting the time it waited for
a CPU (answer_wait.py); an import gets ``import_timeout`` on the same terms.

Whatever the test's budget, no request lasts past what is left of the submission's wall budget
(``[limits] submission_timeout``), counted from the session's first request (its imports,
calls, the kills of workers that hung or crashed, and the harness's own work between them; not
the starts of workers), so that no submission costs a batch much more than that.
"""

from __future__ import annotations

import math
import time
from typing import Any

from autograder.runtime.harness import cpu_time, failures
from autograder.runtime.harness.answer_wait import CallClock
from autograder.runtime.harness.failures import IMPORT_LABEL
from autograder.runtime.harness.limits import Limits
from autograder.runtime.harness.strikes import Strikes
from autograder.runtime.harness.trace import TestState, TestTrace
from autograder.runtime.shared.errors import LearnerError


class RequestBudget:
    """The CPU and wall seconds of the next request, from the limits and the running test."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        #: The running test (LearnerSession.begin_test), whose budget requests spend.
        self.test: TestState | None = None
        #: When the session's first request started (submission_timeout counts from there).
        self.started: float | None = None
        self.strikes = Strikes(limits.hang_strikes)

    def submission_left(self) -> float:
        """Wall seconds left of ``limits.submission_timeout``."""
        if self.started is None:
            self.started = time.monotonic()
        return self.limits.submission_timeout - (time.monotonic() - self.started)

    def not_counted(self, seconds: float) -> None:
        """Leave ``seconds`` out of the submission's time: a worker's start, which is the
        machine's speed (a fresh interpreter importing torch), not the learner's doing."""
        if self.started is not None:
            self.started += seconds

    def begin_test(self, name: str) -> None:
        """A fresh time budget of ``limits.test_timeout`` and output buffer."""
        budget = self.limits.test_timeout
        self.test = TestState(
            name=name,
            remaining=budget,
            output_cap=self.limits.output_kb * 1024,
            wall_remaining=budget * cpu_time.WALL_FACTOR,
        )

    def end_test(self) -> TestTrace:
        """The running test's output, forbidden calls and time-out; no test runs from now on."""
        test, self.test = self.test, None
        if test is None:
            return TestTrace(output="", forbidden=(), timed_out=False)
        return test.finish()

    def refuse_early(self, label: str) -> None:
        """Raise, without starting a worker, what a call of ``label`` would come to: it is
        struck out (hang_strikes), or the submission's wall budget is used up."""
        strikes = self.strikes
        if strikes.struck_out(label):
            if self.test is not None:
                self.test.timed_out = True
            if strikes.crashed(label):
                raise failures.not_run_after_crashes(label, strikes.count(label))
            seconds = self.limits.test_timeout
            raise failures.not_run_after_hangs(label, strikes.count(label), seconds)
        self.check_submission(label)

    def check_submission(self, label: str) -> None:
        """Raise the learner's time-out when the submission's wall budget is used up (no
        worker is started for nothing)."""
        if self.submission_left() > 0:
            return
        if self.test is not None:
            self.test.timed_out = True
        raise failures.submission_spent(label, self.limits.submission_timeout)

    def cpu_seconds(self, phase: str) -> float:
        """The CPU seconds a request of ``phase`` ("import" or "test") may use."""
        if phase == "import":
            return self.limits.import_timeout
        if self.test is not None:
            return max(self.test.remaining, 0.0)
        return self.limits.test_timeout

    def test_wall_seconds(self, phase: str) -> float:
        """The wall-clock seconds the test's (or the import's) own budget gives the request."""
        if phase == "test" and self.test is not None:
            return max(self.test.wall_remaining, 0.0)
        return self.cpu_seconds(phase) * cpu_time.WALL_FACTOR

    def clock(self, phase: str, baseline: float | None) -> CallClock:
        """The budgets of the next request of ``phase``, whose worker had used ``baseline``
        CPU seconds when it last answered (answer_wait.py)."""
        return CallClock(
            cpu=self.cpu_seconds(phase),
            wall=self.test_wall_seconds(phase),
            submission=max(self.submission_left(), 0.0),
            baseline=baseline,
        )

    def limit_of(self, label: str) -> float:
        """The CPU seconds a call (or an import, by its label) is given."""
        if label.startswith(IMPORT_LABEL):
            return self.limits.import_timeout
        return self.limits.test_timeout

    def timeout_error(self, label: str, *, waiting: bool = False) -> LearnerError:
        """``label`` ran out of time; ``waiting``: while computing for less than its budget
        (it slept, waited for input or was blocked), so the wall limit is named."""
        if waiting:
            return failures.timeout_waiting(label, self.limit_of(label) * cpu_time.WALL_FACTOR)
        return failures.timeout(label, self.limit_of(label))


def cpu_count(value: Any) -> float | None:
    """A worker's CPU seconds as its answer gives them; None unless a finite number >= 0
    (learner code runs in that process and may have changed what it reports)."""
    if type(value) is not float or not math.isfinite(value) or value < 0:
        return None
    return value


def charged_seconds(
    tree_before: float | None,
    tree_after: float | None,
    reported_before: float | None,
    reported_after: float | None,
) -> float | None:
    """The CPU seconds a call is charged: what the worker's process tree used by /proc's count
    (the harness's own reads, before and after the call), never less than what the worker
    says it used itself; None when neither is known (then the wall time is charged)."""
    counts = []
    if tree_before is not None and tree_after is not None:
        counts.append(max(tree_after - tree_before, 0.0))
    if reported_before is not None and reported_after is not None:
        counts.append(max(reported_after - reported_before, 0.0))
    return max(counts) if counts else None
