"""The request channel to one learner's worker: start it, send a request, wait for its answer.

``WorkerChannel`` holds at most one worker at a time and starts it on the first request (a
worker that dies before it is ready gets one more try). Each round trip waits within the running
test's time budget (cpu_time.py, answer_wait.py). A time-out (a strike against the call,
strikes.py), a crash, an answer too long to read or a garbled one (not repeating the request's
``seq``) is told as a LearnerError and stops the worker; the next request starts a fresh one.

A call the busy machine starved until its wall limit stops the worker too, but is no time-out of
the learner's: it raises failures.MachineBusy, a grader error, and costs no strike.

Design: docs/internals/runtime.md#the-request-channel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.feedback import is_hidden
from autograder.learner_files import LinkRefused
from autograder.runtime.harness import cpu_time, failures, output_paths, process_tree, stopped_at
from autograder.runtime.harness.answer_wait import CallClock, Wait, wait_for_answer
from autograder.runtime.harness.budget import RequestBudget, charged_seconds, cpu_count
from autograder.runtime.harness.limits import Limits
from autograder.runtime.harness.part_labels import PartLabels
from autograder.runtime.harness.private_copy import (
    MAX_PACKAGE_BYTES,
    PackageTooLarge,
    over_disk_quota,
)
from autograder.runtime.harness.trace import TestState, from_wire
from autograder.runtime.harness.worker_handle import WorkerHandle
from autograder.runtime.shared import messages, wire
from autograder.runtime.shared.errors import LearnerError

START_ATTEMPTS = 2  # fresh workers tried before a start failure is remembered for the session


@dataclass
class Answer:
    """A response frame read back: the response, what the learner printed meanwhile, and the
    label of the call it answers (a fused request's part its last progress frame named)."""

    response: dict[str, Any]
    output: str
    label: str


class WorkerChannel:
    """The harness's line to the learner's worker (see the module docstring).

    ``on_worker_change`` is called when a worker stops and when a new one is ready: what the
    caller knows of the old worker (its objects, its imports) is void from then on.
    """

    def __init__(
        self,
        package_dir: Path,
        *,
        package: str,
        limits: Limits,
        display_dir: str,
        forbidden_apis: Sequence[str],
        hide_paths: Sequence[Path],
        on_worker_change: Callable[[], None],
        tamper_evidence: str = "",
    ) -> None:
        self.package_dir = package_dir
        self.package = package
        self.display_dir = display_dir
        self.forbidden_apis = tuple(forbidden_apis)
        self.hide_paths = tuple(hide_paths)
        self.on_worker_change = on_worker_change
        self.budget = RequestBudget(limits)
        self.strikes = self.budget.strikes
        self.limits = limits
        #: What the last worker did to confine itself (worker/confine.confine's report).
        self.isolation: dict[str, Any] | None = None
        #: How the last worker started: "zygote" (forked warm) or "fresh" (a new interpreter).
        self.worker_start: str | None = None
        #: The next worker imports a bare package instead of running its ``__init__.py``.
        self.skip_init = False
        self.generation = 0
        #: Bytes of answers read since the plugin last freed the harness's memory.
        self.answer_bytes = 0
        #: Ids of worker objects whose last proxy died, released with the next request.
        self.pending_release: list[int] = []
        self.worker: WorkerHandle | None = None
        self.closed = False
        #: What the static check saw the learner's source reach in the grader or the worker
        #: ("assignments/t101/x.py line 3: gc.get_referents"), or "": with it, a worker that
        #: breaks the protocol is told as tampering (the plugin passes it to the session).
        self.tamper_evidence = tamper_evidence
        #: Whether the running worker's output must not reach the learner (it holds what the
        #: learner may not read: standin_custody.StandInCustody.withheld); its owner sets it.
        self.output_withheld: Callable[[], bool] = lambda: False
        #: The course's module files as messages name them, the only files a hidden test's
        #: sentence may name ("assignments/t101/softmax.py"); its owner sets them.
        self.module_files: frozenset[str] = frozenset()
        self._start_failure: Exception | None = None
        self._seq = 0  # the last request's number; its answer must repeat it (worker/serve.py)
        # The worker's CPU seconds when it last answered: where the next request's CPU time
        # starts (cpu_time.py); None before a worker is ready, or when it sent no usable count.
        self._worker_cpu: float | None = None

    # -- one round trip ---------------------------------------------------------------------

    @property
    def limits(self) -> Limits:
        return self._limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        self._limits = self.budget.limits = limits
        self.budget.strikes.limit = limits.hang_strikes

    @property
    def test(self) -> TestState | None:
        """The running test (LearnerSession.begin_test), whose budget requests spend."""
        return self.budget.test

    @test.setter
    def test(self, test: TestState | None) -> None:
        self.budget.test = test

    def round_trip(
        self,
        request: dict[str, Any],
        *,
        label: str,
        phase: str,
        part_labels: PartLabels | None = None,
    ) -> Answer:
        """Send ``request`` ("import" or "test" ``phase``) and read its answer. ``part_labels``:
        for a request about several parts (set_standins, chain), the label of each."""
        self.budget.check_submission(label)
        worker = self.ensure_worker()
        reported = self._worker_cpu  # the worker's own count: learner code may have lowered it
        baseline = worker.tree_cpu  # as the last request left the tree
        if baseline is None:
            baseline = cpu_time.tree_seconds(worker.process.pid)
        clock = self.budget.clock(phase, baseline)
        test = self.test if phase == "test" else None
        if test is not None and min(clock.cpu, clock.wall, clock.submission) <= 0:
            # The test's budget is already spent: the idle worker need not be killed.
            test.timed_out = True
            raise self.budget.timeout_error(label)
        request["release"], self.pending_release = self.pending_release, []
        self._seq += 1
        request["seq"] = seq = self._seq
        started, max_frame = time.monotonic(), 3 * self.limits.max_wire_bytes + 2**20
        wait = wait_for_answer(
            worker, wire.dumps(request), Wait(label), clock, part_labels, max_frame
        )
        elapsed = time.monotonic() - started
        self.answer_bytes += wait.bytes_read
        if test is not None:
            # The time the call waited for a CPU is the machine's: the test's wall time
            # left does not pay for it (answer_wait.py)
            test.wall_remaining -= max(elapsed - wait.grown, 0.0)
            test.remaining -= elapsed  # until the answer says how much CPU it took
        self._worker_cpu = None
        self._raise_unanswered(worker, wait, phase, clock)
        tree = process_tree.snapshot(worker.process.pid)  # one walk, before strays are killed
        tree_after = tree.cpu
        strays = process_tree.stop_strays(worker.process.pid, worker.own_pids, tree.pids)
        # a stray's count leaves the tree with it: then the tree is read again
        worker.tree_cpu = cpu_time.tree_seconds(worker.process.pid) if strays else tree.cpu
        output = self.collect_output()
        if strays and self.test is not None:
            self.test.add_output(process_tree.strays_sentence(wait.label, strays))
        response = self._read(wait.frame or b"", seq, wait.label)
        self._check_disk(worker, wait.label)
        self._worker_cpu = cpu_count(response.get("cpu"))
        computed = charged_seconds(clock.baseline, tree_after, reported, self._worker_cpu)
        if test is not None and computed is not None:
            # The budget pays for what the tree computed, not for waiting on a busy machine
            test.remaining += elapsed - computed
        if computed is not None and computed > clock.cpu * (1 + cpu_time.SLACK) + 0.02:
            self._raise_over_budget(wait.label, phase)
        return Answer(response, output, wait.label)

    def _raise_over_budget(self, label: str, phase: str) -> None:
        """A call answered in time whose tree (its children, their children) computed more
        than its CPU budget: a time-out, as if it had not answered."""
        self.stop()
        if self.test is not None and phase == "test":
            self.test.timed_out = True
            self.strikes.add(label)
        raise self.budget.timeout_error(label)

    def _raise_unanswered(
        self, worker: WorkerHandle, wait: Wait, phase: str, clock: CallClock
    ) -> None:
        """The error of a wait that brought no answer: out of time (a LearnerError and a
        strike against the call, or MachineBusy when the machine starved it), too long an
        answer, or the worker's death."""
        if not wait.answered:
            busy, hidden = wait.machine_busy(clock), is_hidden() or self.output_withheld()
            stack = b"" if busy or wait.cut else stopped_at.ask(worker)  # before the kill
            self.stop()
            if busy:  # not the learner's: no strike, no time-out of theirs
                raise failures.machine_busy(wait.label, wait)
            if self.test is not None and phase == "test":
                self.test.timed_out = True
            if wait.cut:
                seconds = self.limits.submission_timeout
                raise failures.submission_spent(wait.label, seconds, cut=True)
            if phase == "test":
                self.strikes.add(wait.label)
            # wait.waiting: the CPU budget was not used, it slept, waited or was blocked
            error = self.budget.timeout_error(wait.label, waiting=wait.waiting)
            where = (self.package_dir, self.package, self.display_dir)
            raise stopped_at.told(error, stack, *where, hidden=hidden, files=self.module_files)
        if wait.too_large:
            self.stop()
            raise failures.too_large(wait.label, self.limits.max_wire_bytes)
        if wait.frame is None:
            status = worker.wait_exit()
            self.stop()
            if phase == "test":
                self.strikes.add(wait.label, crashed=True)
            crash = failures.crash(wait.label, status, self.limits.memory_mb)
            raise self.broken(wait.label, failures.how_it_ended(status), crash) from None

    def _read(self, frame: bytes, seq: int, label: str) -> dict[str, Any]:
        """The answer to request ``seq``; anything else stops the worker as garbled."""
        try:
            response = wire.loads(frame, max_depth=self.limits.max_wire_depth + 8)
            if type(response) is not dict or type(response.get("ok")) is not bool:
                raise ValueError("not an answer")  # e.g. a progress frame learner code forged
            if type(response.get("seq")) is not int or response["seq"] != seq:
                raise ValueError("not this answer")  # a frame learner code wrote, or a stale one
            response["forbidden"] = [from_wire(entry) for entry in response.get("forbidden", [])]
        except (wire.WireError, TypeError, ValueError, AttributeError) as error:
            self.stop()
            garbled = failures.garbled(label, error)
            raise self.broken(label, messages.BROKE_GARBLED, garbled) from None
        if response.get("tampered"):  # the worker found a recorder undone: not to be trusted
            self.stop()
            raise failures.tampered(label, messages.sanitize(str(response["tampered"]), 200))
        if not response["ok"] and "internal" in response and self.tamper_evidence:
            raise failures.broke_with_evidence(label, messages.BROKE_INTERNAL, self.tamper_evidence)
        return response

    def broken(self, label: str, how: str, otherwise: Exception) -> Exception:
        """A worker that broke the protocol: tampering when the static check saw the learner's
        source reach into the grader or the worker (``tamper_evidence``), else ``otherwise``
        (a crash, a garbled answer, or the grader's own failure)."""
        if not self.tamper_evidence:
            return otherwise
        return failures.broke_with_evidence(label, how, self.tamper_evidence)

    def _check_disk(self, worker: WorkerHandle, label: str) -> None:
        """Where the worker has no size-capped root of its own (no namespaces), the harness
        measures its folder after each request: past ``disk_mb``, the worker is stopped."""
        capped = (self.isolation or {}).get("disk_mb")
        if not capped and over_disk_quota(worker.root, self.limits.disk_mb):
            self.stop()
            raise failures.disk_over(label, self.limits.disk_mb)

    # -- the worker's lifetime --------------------------------------------------------------

    def ensure_worker(self) -> WorkerHandle:
        """The running worker, started (and handed the init frame) if there is none."""
        if self.closed:
            raise RuntimeError("This LearnerSession is closed; create a new one.")
        if self._start_failure is not None:
            raise self._start_failure
        if self.worker is not None:
            return self.worker
        # A worker that dies before its ready message (killed from outside, a fork server
        # going away) gets one fresh try: only a start that fails twice running is remembered,
        # and fails every later test at once instead of waiting for each start in turn.
        starting = time.monotonic()
        for attempt in range(START_ATTEMPTS):
            worker = self._new_worker()
            try:
                ready = self._handshake(worker)
                break
            except Exception as exc:
                head, _ = worker.take_output(8192)
                worker.close()
                if attempt + 1 < START_ATTEMPTS:
                    continue
                self._start_failure = RuntimeError(
                    f"The grading worker did not start ({exc}); its output:\n"
                    + head.decode("utf-8", errors="replace")
                )
                raise self._start_failure from None
        self.budget.not_counted(time.monotonic() - starting)
        self._worker_cpu = cpu_count(ready.get("cpu"))
        # No learner code has run yet: the tree is the worker's own (process_tree.py)
        tree = process_tree.snapshot(worker.process.pid)
        worker.own_pids, worker.tree_cpu = frozenset(tree.pids), tree.cpu
        process_tree.oom_first(sorted(worker.own_pids))
        worker.take_output(0)  # anything printed while starting is not the learner's
        self.isolation = ready["ready"].get("isolation")
        self.worker_start = worker.started_by
        self.worker = worker
        self.generation += 1
        self.on_worker_change()
        return worker

    def _new_worker(self) -> WorkerHandle:
        try:
            return WorkerHandle(
                self.package_dir,
                self.package,
                memory_mb=self.limits.memory_mb,
                file_mb=self.limits.file_mb,
                disk_mb=self.limits.disk_mb,
                hide=self.hide_paths,
                startup_timeout=self.limits.startup_timeout,
            )
        except PackageTooLarge:
            feedback = messages.TOO_LARGE.format(
                expected=self.display_dir, mb=MAX_PACKAGE_BYTES // 2**20
            )
            self._start_failure = LearnerError(kind="import_error", feedback=feedback)
            raise self._start_failure from None
        except LinkRefused:  # a folder of the package became a link since it was checked
            feedback = messages.PACKAGE_BECAME_LINK.format(expected=self.display_dir)
            self._start_failure = LearnerError(kind="import_error", feedback=feedback)
            raise self._start_failure from None

    def _handshake(self, worker: WorkerHandle) -> dict:
        """Send the init frame and wait for the worker's ready message."""
        init = {
            "package": self.package,
            "root": str(worker.root),
            "shown_dir": self.display_dir,
            "forbidden": list(self.forbidden_apis),
            "refused": worker.copy.refused,
            "skip_init": self.skip_init,
            "max_bytes": self.limits.max_wire_bytes,
            "max_depth": self.limits.max_wire_depth,
            "disk_mb": self.limits.disk_mb,
        }
        return worker.handshake(wire.dumps(init), self.limits.startup_timeout)

    def stop(self) -> None:
        """Kill the worker (keeping what it printed for the running test), if there is one."""
        withheld = self.output_withheld()  # asked while the worker is still the running one
        worker, self.worker = self.worker, None
        self.pending_release = []
        self.on_worker_change()
        if worker is not None:
            # processes that left the worker's process group (setsid) but not its tree
            process_tree.stop_strays(worker.process.pid, frozenset())
            worker.kill()
            self.collect_output(worker, withheld=withheld)
            worker.close()

    def close(self) -> None:
        """Stop the worker for good: later requests raise RuntimeError."""
        self.closed = True
        self.stop()

    # -- the learner's output ---------------------------------------------------------------

    def collect_output(
        self, worker: WorkerHandle | None = None, *, withheld: bool | None = None
    ) -> str:
        """What the worker printed since the last call, named and neutralised for reports, and
        added to the running test's output; when it is ``withheld`` (default: output_withheld),
        one sentence saying so instead, once a test."""
        worker = worker or self.worker
        if worker is None:
            return ""
        cap = self.limits.output_kb * 1024
        head, total = worker.take_output(cap)
        if not total:
            return ""
        if self.output_withheld() if withheld is None else withheld:
            if self.test is not None and messages.OUTPUT_WITHHELD not in self.test.output:
                self.test.add_output(messages.OUTPUT_WITHHELD)
            return ""
        text = output_paths.shown(
            head.decode("utf-8", errors="replace"), str(worker.root), self.display_dir
        )
        text = messages.sanitize(text, cap=cap)
        if total > len(head):
            text += f"\n[... {total - len(head)} more bytes of output not shown]\n"
        if self.test is not None:
            self.test.add_output(text)
        return text
