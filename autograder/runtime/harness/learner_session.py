"""LearnerSession: the proxy graders and the pytest plugin use to run learner code.

The session owns at most one worker at a time and starts it lazily. A time-out or a crash kills the
worker's process group and raises a LearnerError; the next request starts a fresh worker and
re-imports modules lazily. Objects made by the dead worker are lost (their use raises kind
"crash"). A module that failed to import is remembered and fails again at once, with the same
LearnerError, for the rest of the session.
"""

from __future__ import annotations

import math
import re
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import torch

from autograder.runtime.harness import cpu_time, failures
from autograder.runtime.harness.failures import IMPORT_LABEL, Record
from autograder.runtime.harness.limits import Limits
from autograder.runtime.harness.private_copy import MAX_PACKAGE_BYTES, PackageTooLarge
from autograder.runtime.harness.remote import CallResult, RemoteCallable, RemoteModule, RemoteObject
from autograder.runtime.harness.trace import TestState, TestTrace
from autograder.runtime.harness.worker_handle import WorkerHandle
from autograder.runtime.shared import messages, wire
from autograder.runtime.shared.errors import LearnerError

DEFAULT_FORBIDDEN_MESSAGE = (
    "This course asks you to build this part yourself, so {api} may not be used here."
)
MAX_TYPES_PER_RESPONSE = 1000  # type descriptions kept from one response (see _learn_methods)
START_ATTEMPTS = 2  # fresh workers tried before a start failure is remembered for the session
_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class ParameterInfo(NamedTuple):
    """One entry of ``named_parameters(remove_duplicate=False)``; equal ``storage`` keys mean the
    parameters share memory (tied weights)."""

    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    storage: int


class LearnerSession:
    """Runs the learner's package ``package`` (copied from ``package_dir``) in a worker.

    ``display_dir`` is how messages name the package folder (e.g. "assignments/t101"; default:
    ``package_dir`` as given). ``forbidden_message`` is the course's sentence with an ``{api}``
    placeholder.

    Forbidden APIs: every call of one from a learner file is recorded (``forbidden_seen``, and
    the test's TestTrace) and the call returns normally, so the points rule can zero exactly the
    component whose file made it (an encoder that uses a forbidden multi-head attention keeps
    its own points). With ``forbidden_raises=True`` a call also fails with
    LearnerError(kind="forbidden") when the forbidden call was made in the called code's own
    file (``MultiHeadAttention(...)`` whose ``multi_head_attention.py`` builds an
    ``nn.MultiheadAttention``), naming the API and the file:line.

    ``hide_paths``: folders learner code must not see (the course with its references and hidden
    tests); the harness's folder and home and the original submission are hidden too, where the
    platform allows it (``isolation`` then says what the worker did: see
    runtime/harness/isolation.py).
    """

    def __init__(
        self,
        package_dir: Path,
        *,
        package: str,
        limits: Limits,
        forbidden_apis: Sequence[str] = (),
        forbidden_message: str = DEFAULT_FORBIDDEN_MESSAGE,
        display_dir: str | None = None,
        forbidden_raises: bool = False,
        hide_paths: Sequence[Path] = (),
    ) -> None:
        self.package_dir = Path(package_dir)
        self.package = package
        self.limits = limits
        self.forbidden_apis = tuple(forbidden_apis)
        self.forbidden_message = forbidden_message
        self.display_dir = display_dir if display_dir is not None else str(package_dir)
        self.forbidden_raises = forbidden_raises
        self.hide_paths = tuple(Path(p) for p in hide_paths)
        #: What the last worker did to confine itself (worker/confine.confine's report).
        self.isolation: dict[str, Any] | None = None
        #: How the last worker started: "zygote" (forked warm) or "fresh" (a new interpreter).
        self.worker_start: str | None = None
        #: The LearnerError of the package's ``__init__.py``, if executing it failed.
        self.package_init_error: LearnerError | None = None
        self.generation = 0
        #: Bytes of answers read from workers since the plugin last freed the harness's memory
        #: (pytest_plugin resets it): large learner outputs make it free them between tests.
        self.answer_bytes = 0
        self._worker: WorkerHandle | None = None
        self._start_failure: Exception | None = None
        self._skip_init = False
        self._package_ready = False
        self._imported: set[str] = set()
        self._import_failures: dict[str, LearnerError] = {}
        self._forbidden: dict[Record, None] = {}
        self._hangs: dict[str, int] = {}  # call label -> tests in which it ran out of time
        self._seq = 0  # the last request's number; its answer must repeat it (worker.py)
        # The worker's CPU seconds when it last answered: where the next request's CPU time
        # starts (cpu_time.py); None before a worker is ready, or when it sent no usable count.
        self._worker_cpu: float | None = None
        self._test: TestState | None = None
        self._pending_release: list[int] = []
        # One RemoteObject per live worker object, so `m.eval() is m` and releases are exact.
        self._remotes: weakref.WeakValueDictionary[int, RemoteObject] = (
            weakref.WeakValueDictionary()
        )
        #: type name -> its method names (worker/handler._method_names), as this worker sent them
        self._methods: dict[str, frozenset[str]] = {}
        self._closed = False

    # -- public API -------------------------------------------------------------------------

    def module(self, name: str) -> RemoteModule:
        """``<package>.<name>``, imported in the worker at the first call into it."""
        if not _MODULE_NAME.fullmatch(name):
            raise ValueError(f"Expected a module name such as 'softmax', got {name!r}.")
        return RemoteModule(self, name)

    def begin_test(self, name: str) -> None:
        """Start a test: a fresh time budget of ``limits.test_timeout`` and output buffer."""
        cap = self.limits.output_kb * 1024
        budget = self.limits.test_timeout
        self._test = TestState(
            name=name,
            remaining=budget,
            output_cap=cap,
            wall_remaining=budget * cpu_time.WALL_FACTOR,
        )

    def end_test(self) -> TestTrace:
        """End the test started by begin_test; return its output, forbidden calls, time-out."""
        test, self._test = self._test, None
        if test is None:
            return TestTrace(output="", forbidden=(), timed_out=False)
        return test.finish()

    @property
    def forbidden_seen(self) -> tuple[Record, ...]:
        """Every (api, file relative to the package dir, line) recorded in this session."""
        return tuple(self._forbidden)

    def parameter_grads(
        self, obj: RemoteObject, *args: Any, cotangent: Any, **kwargs: Any
    ) -> dict[str, torch.Tensor | None]:
        """Run ``obj(*args, **kwargs)`` with grad, backprop ``(first output * cotangent).sum()``
        and return each parameter's gradient (None where no gradient reached it)."""
        _expect_module(obj)
        fields = {"args": args, "kwargs": kwargs, "cotangent": cotangent}
        label = f"{obj._label}(...)"
        response = self._run("parameter_grads", obj._target, label, fields, owner=obj)
        return self._decode(response["value"], label)

    def parameters(self, obj: RemoteObject) -> list[ParameterInfo]:
        """``named_parameters(remove_duplicate=False)`` of a remote module, without the data."""
        _expect_module(obj)
        label = f"{obj._short_type}.named_parameters()"
        response = self._run("parameters", obj._target, label, {}, owner=obj)
        infos = self._decode(response["value"], label)
        return [ParameterInfo(n, tuple(s), d, k) for n, s, d, k in infos]

    def set_standin(
        self, obj: RemoteObject, path: str, kind: str, config: dict[str, Any], state: Any
    ) -> None:
        """Set ``obj.<path>`` ("self_attn", "layers.0") in the worker to a known-good module
        built from torch by runtime/standins.py (``kind``, ``config``, state dict ``state``);
        calls of ``obj`` may then reach a forbidden API through it without being recorded."""
        self.set_standins(obj, [(path, kind, config, state)])

    def set_standins(
        self,
        obj: RemoteObject,
        parts: Sequence[tuple[str, str, dict[str, Any], Any]],
        then: Sequence[tuple[str, tuple, dict[str, Any]]] = (),
    ) -> None:
        """``set_standin`` for each ``(path, kind, config, state)`` of ``parts``, in order, in
        one request. The first part that fails stops the rest and raises what set_standin
        would have raised for it; a time-out or crash names the first part. ``then``: method
        calls on ``obj`` made after them in the same request, as ``chain`` makes them
        (``[("eval", (), {})]``)."""
        if not parts:
            self.chain(obj, then)
            return
        labels = [f"Setting {obj._short_type}.{path}" for path, *_ in parts]
        fields: dict[str, Any] = {
            "parts": [
                {"path": path, "kind": kind, "config": config, "state": state}
                for path, kind, config, state in parts
            ]
        }
        steps = list(then)
        if steps and self.forbidden_raises:  # each call's own forbidden records decide at once
            self.set_standins(obj, parts)
            self._steps_here(obj, steps)
            return
        if steps:
            fields["steps"] = [{"name": n, "args": a, "kwargs": k} for n, a, k in steps]
            fields["stop"] = self._struck_out()
        part_labels = _ChainLabels(labels, [name for name, _, _ in steps], obj._type_name)
        response = self._run(
            "set_standins", obj._target, labels[0], fields, obj, part_labels=part_labels
        )
        done = len(self._decode(response["value"], labels[0]) or [])
        self._steps_here(obj, steps[done:])

    def stand_in_function(self, module: str, name: str, *, source: str, kind: str) -> bool:
        """Make learner module ``module`` (``"attention"``) call the known-good function
        stand-in ``kind`` (runtime/standins.py) wherever it calls learner module ``source``'s
        own function ``name`` through a global (``from .softmax import softmax``, under any
        name); a grader of ``module`` then does not charge ``source``'s mistakes a second
        time. Lasts for this worker: call it in each test. Returns whether it replaced it;
        False when ``source`` does not import (its own graders say why). A ``module`` that does
        not import raises its import failure, as calling it would."""
        try:
            self._ensure_module(source)
        except LearnerError:
            return False
        label = f"Setting {module}.{name} to a known-good {kind}"
        fields = {"module": module, "source": source, "name": name, "kind": kind}
        response = self._run("stand_in_function", ["module", module, name], label, fields)
        return bool(self._decode(response["value"], label))

    def build(
        self, factory: RemoteCallable | RemoteObject, *args: Any, state: Any = None, **kwargs: Any
    ) -> RemoteObject:
        """``factory(*args, **kwargs)``, then ``.load_state_dict(state)`` when ``state`` is not
        None, then ``.eval()``, in one request; returns the module (a RemoteObject). Failures
        read as those of the three separate calls: a learner error, time-out or crash names
        the call that failed (``MultiHeadAttention.load_state_dict(...)``)."""
        steps: list[tuple[str, tuple, dict[str, Any]]] = []
        if state is not None:
            steps.append(("load_state_dict", (state,), {}))
        steps.append(("eval", (), {}))
        if not isinstance(factory, (RemoteCallable, RemoteObject)):
            obj = factory(*args, **kwargs)
            self._steps_here(obj, steps)
            return obj
        label = f"{factory._qualname if isinstance(factory, RemoteCallable) else factory._label}"
        owner = factory if isinstance(factory, RemoteObject) else None
        obj, _ = self._chain(factory._target, f"{label}(...)", (args, kwargs), steps, owner)
        return obj

    def chain(self, obj: RemoteObject, steps: Sequence[tuple[str, tuple, dict[str, Any]]]) -> list:
        """``[obj.name(*args, **kwargs) for name, args, kwargs in steps]``, in order, in one
        request (``[("load_state_dict", (state,), {}), ("eval", (), {})]``); the first call
        that fails stops the rest and raises what it would have raised alone."""
        if not isinstance(obj, RemoteObject):
            return self._steps_here(obj, steps)
        _, values = self._chain(obj._target, None, None, steps, obj)
        return values

    def ping(self) -> bool:
        """Start the worker if needed and check that it answers."""
        return self._request({"op": "ping"}, label="ping", phase="test")["value"] == "pong"

    def close(self) -> None:
        """Kill the worker and delete its private copy; idempotent."""
        self._closed = True
        self._stop_worker()

    def __enter__(self) -> LearnerSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- used by the proxies ----------------------------------------------------------------

    def _call(
        self,
        target: list[Any],
        label: str,
        args: tuple,
        kwargs: dict[str, Any],
        owner: RemoteObject | None = None,
    ) -> CallResult:
        response, output = self._run_with_output(
            "call", target, label, {"args": args, "kwargs": kwargs}, owner
        )
        return CallResult(
            value=self._decode(response["value"], label),
            args=tuple(self._decode(response["args"], label)),
            kwargs=self._decode(response["kwargs"], label),
            output=output,
        )

    def _call_value(
        self,
        target: list[Any],
        label: str,
        args: tuple,
        kwargs: dict[str, Any],
        owner: RemoteObject | None = None,
    ) -> Any:
        """``_call(...).value`` without the arguments after the call: the worker neither
        encodes nor sends them back (a plain ``f(x)``, most calls)."""
        fields = {"args": args, "kwargs": kwargs, "args_back": False}
        response = self._run("call", target, label, fields, owner)
        return self._decode(response["value"], label)

    def _getattr(
        self, target: list[Any], name: str | None, label: str, owner: RemoteObject | None = None
    ) -> Any:
        response = self._run("getattr", target, label, {"name": name}, owner=owner)
        return self._decode(response["value"], label)

    def _has_method(self, obj: RemoteObject, name: str) -> bool:
        """Whether reading ``name`` from ``obj`` gives a bound method of its class's function
        (then obj.name(...) is one request, not a read and a call)."""
        return obj._generation == self.generation and name in self._methods.get(obj._type_name, ())

    def _learn_methods(self, methods: Any) -> None:
        """Keep the method names the worker sent for types it described for the first time.
        They only decide whether a call takes one request or two, so anything malformed is
        ignored."""
        if not isinstance(methods, dict):
            return
        for type_name, names in list(methods.items())[:MAX_TYPES_PER_RESPONSE]:
            if isinstance(type_name, str) and isinstance(names, list):
                self._methods[type_name] = frozenset(n for n in names if isinstance(n, str))

    def _chain(
        self,
        target: list[Any],
        call_label: str | None,
        call: tuple[tuple, dict[str, Any]] | None,
        steps: Sequence[tuple[str, tuple, dict[str, Any]]],
        owner: RemoteObject | None,
    ) -> tuple[Any, list[Any]]:
        """handler.op_chain: call ``target`` with ``call`` (or take it as it is), then the steps'
        method calls on the result; the steps the worker left (see op_chain) run here, one
        request each, exactly as the grader's own ``obj.name(...)`` would."""
        steps = list(steps)
        if call is None and not steps:
            return owner, []
        if self.forbidden_raises:  # each call's own forbidden records decide at once
            head = self._run("call", target, call_label, _call_fields(*call), owner) if call else {}
            obj = self._decode(head["value"], call_label or failures.SOME_CALL) if call else owner
            return obj, self._steps_here(obj, steps)
        owner_type = owner._type_name if owner is not None and call is None else None
        first = [call_label] if call_label is not None else []
        labels = _ChainLabels(first, [name for name, _, _ in steps], owner_type)
        fields: dict[str, Any] = {
            "steps": [{"name": name, "args": a, "kwargs": k} for name, a, k in steps],
            "stop": self._struck_out(),
        }
        if call is not None:
            fields["call"] = {"args": call[0], "kwargs": call[1]}
        response = self._run("chain", target, labels.first_label, fields, owner, part_labels=labels)
        values = self._decode(response["value"], labels.first_label)
        obj = values[0] if call is not None else owner
        done = len(values) - 1
        results = values[1:] + self._steps_here(obj, steps[done:])
        return obj, results

    def _struck_out(self) -> list[str]:
        """The call labels the harness no longer runs (hang_strikes time-outs)."""
        return [label for label, n in self._hangs.items() if n >= self.limits.hang_strikes]

    @staticmethod
    def _steps_here(obj: Any, steps: Sequence[tuple[str, tuple, dict[str, Any]]]) -> list:
        return [getattr(obj, name)(*args, **kwargs) for name, args, kwargs in steps]

    def _release(self, obj: RemoteObject) -> None:
        if obj._generation == self.generation and self._worker is not None:
            self._pending_release.append(obj._ref_id)

    # -- requests ---------------------------------------------------------------------------

    def _run(
        self,
        op: str,
        target: list[Any],
        label: str,
        fields: dict[str, Any],
        owner: RemoteObject | None = None,
        part_labels: _PartLabels | None = None,
    ) -> dict[str, Any]:
        return self._run_with_output(op, target, label, fields, owner, part_labels)[0]

    def _run_with_output(
        self,
        op: str,
        target: list[Any],
        label: str,
        fields: dict[str, Any],
        owner: RemoteObject | None,
        part_labels: _PartLabels | None = None,
    ) -> tuple[dict[str, Any], str]:
        if owner is not None:
            self._check_alive(owner)
        if target[0] == "module" and target[1] in self._import_failures:
            raise self._import_failures[target[1]]  # without starting a worker for nothing
        strikes = self._hangs.get(label, 0)
        if strikes >= self.limits.hang_strikes:  # also without starting a worker for nothing
            if self._test is not None:
                self._test.timed_out = True
            raise failures.not_run_after_hangs(label, strikes, self.limits.test_timeout)
        self._ensure_worker()
        if target[0] == "module":
            self._ensure_module(target[1])
        if owner is not None:
            self._check_alive(owner)
        encoded = {key: self._encode(value) for key, value in fields.items()}
        request = {"op": op, "target": target, **encoded}
        return self._request_with_output(
            request, label=label, phase="test", part_labels=part_labels
        )

    def _request(self, request: dict[str, Any], *, label: str, phase: str) -> dict[str, Any]:
        return self._request_with_output(request, label=label, phase=phase)[0]

    def _request_with_output(
        self,
        request: dict[str, Any],
        *,
        label: str,
        phase: str,
        part_labels: _PartLabels | None = None,
    ) -> tuple[dict[str, Any], str]:
        """One round trip. ``part_labels``: for a request about several parts (set_standins,
        chain), the label of each; a learner error names the part the worker says failed, and
        a time-out or crash the part its last progress frame announced (chain)."""
        strikes = self._hangs.get(label, 0)
        worker = self._ensure_worker()
        timeout, wall = self._timeout(phase), self._wall_timeout(phase)
        if phase == "test" and self._test is not None and min(timeout, wall) <= 0:
            # The test's budget is already spent: the idle worker need not be killed.
            self._test.timed_out = True
            raise self._timeout_error(label)
        request["release"], self._pending_release = self._pending_release, []
        self._seq += 1
        request["seq"] = seq = self._seq
        started = time.monotonic()
        give_up, baseline = started + min(timeout, wall), self._worker_cpu
        progress = _Progress()
        too_large = sent = waiting = False
        while True:
            try:
                if not sent:
                    worker.conn.send_bytes(wire.dumps(request))
                    sent = True
                answered = worker.conn.poll(max(give_up - time.monotonic(), 0.0))
            except OSError:
                answered = True  # the worker is gone; recv_bytes below reports how
            if not answered:
                more = self._cpu_left(worker, baseline, timeout, started + wall)
                if more > 0:  # the worker has not computed for its whole budget yet
                    give_up, waiting = time.monotonic() + more, True
                    continue
                waiting = waiting and time.monotonic() >= started + wall
                break
            try:
                frame = worker.conn.recv_bytes(3 * self.limits.max_wire_bytes + 2**20)
                self.answer_bytes += len(frame)
            except (EOFError, OSError) as error:
                # multiprocessing's refusal of a longer frame (the worker's own check let a
                # value through that is larger than it counted): not the worker's death
                too_large = str(error) == "bad message length"
                frame = None
                break
            if part_labels is None or not progress.read(frame, part_labels):
                break
            label = part_labels.label(progress.part, progress.type_name)
            strikes = self._hangs.get(label, 0)
        elapsed = time.monotonic() - started
        if phase == "test" and self._test is not None:
            self._test.wall_remaining -= elapsed
            self._test.remaining -= elapsed  # until the answer says how much CPU it took
        self._worker_cpu = None
        if not answered:
            self._stop_worker()
            if phase == "test":
                self._hangs[label] = strikes + 1
            if phase == "test" and self._test is not None:
                self._test.timed_out = True
            if waiting:  # the CPU budget was not used: it slept, waited or was blocked
                limit = self._limit_of(label) * cpu_time.WALL_FACTOR
                raise failures.timeout_waiting(label, limit)
            raise self._timeout_error(label)
        if too_large:
            self._stop_worker()
            raise failures.too_large(label, self.limits.max_wire_bytes)
        if frame is None:
            status = worker.wait_exit()
            self._stop_worker()
            raise failures.crash(label, status, self.limits.memory_mb) from None
        output = self._collect_output()
        try:
            response = wire.loads(frame, max_depth=self.limits.max_wire_depth + 8)
            if type(response) is not dict or type(response.get("ok")) is not bool:
                raise ValueError("not an answer")  # e.g. a progress frame learner code forged
            if type(response.get("seq")) is not int or response["seq"] != seq:
                raise ValueError("not this answer")  # a frame learner code wrote, or a stale one
            records = [(str(a), str(f), int(n)) for a, f, n in response.get("forbidden", [])]
        except (wire.WireError, TypeError, ValueError, AttributeError):
            self._stop_worker()
            raise failures.garbled(label) from None
        self._worker_cpu = _cpu_count(response.get("cpu"))
        if phase == "test" and self._test is not None and None not in (baseline, self._worker_cpu):
            # The budget pays for what the worker computed, not for waiting on a busy machine
            self._test.remaining += elapsed - max(self._worker_cpu - baseline, 0.0)
        self._note_forbidden(records)
        self._learn_methods(response.get("methods"))
        own = [record for record in records if record[1] == response.get("home")]
        if own and self.forbidden_raises:  # made in the called code's own file
            raise failures.forbidden(
                own, shown_dir=self.display_dir, course_message=self.forbidden_message
            )
        if not response["ok"]:
            if "internal" in response:
                raise RuntimeError(
                    f"The grading worker failed while running {label}:\n{response['internal']}"
                )
            error = response["error"]
            if part_labels is not None and isinstance(error, dict):
                part, type_name = error.get("part"), error.get("type")
                if type(part) is int and (type_name is None or type(type_name) is str):
                    label = part_labels.label(part, type_name) or label
            raise failures.from_worker(error, label)
        return response, output

    def _timeout(self, phase: str) -> float:
        """The CPU seconds the request may use (cpu_time.py)."""
        if phase == "import":
            return self.limits.import_timeout
        if self._test is not None:
            return max(self._test.remaining, 0.0)
        return self.limits.test_timeout

    def _wall_timeout(self, phase: str) -> float:
        """The wall-clock seconds the request may last, however little it computed."""
        if phase == "test" and self._test is not None:
            return max(self._test.wall_remaining, 0.0)
        return self._timeout(phase) * cpu_time.WALL_FACTOR

    @staticmethod
    def _cpu_left(worker: WorkerHandle, baseline: float | None, budget: float, end: float) -> float:
        """Seconds more to wait for an answer: what is left of ``budget`` by the CPU time the
        worker's process tree used since ``baseline``, until the wall-clock ``end``; 0 when it
        is spent, or when it cannot be counted (then the wall clock is the limit)."""
        now = time.monotonic()
        if baseline is None or now >= end:
            return 0.0
        used = cpu_time.tree_seconds(worker.process.pid)
        if used is None:
            return 0.0
        left = budget - max(used - baseline, 0.0)
        if left <= max(budget * cpu_time.SLACK, 0.01):
            return 0.0
        return min(left, end - now)

    # -- worker lifecycle -------------------------------------------------------------------

    def _ensure_worker(self) -> WorkerHandle:
        if self._closed:
            raise RuntimeError("This LearnerSession is closed; create a new one.")
        if self._start_failure is not None:
            raise self._start_failure
        if self._worker is not None:
            return self._worker
        # A worker that dies before its ready message (killed from outside, a fork server
        # going away) gets one fresh try: only a start that fails twice running is remembered,
        # and fails every later test at once instead of waiting for each start in turn.
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
        self._worker_cpu = _cpu_count(ready.get("cpu"))
        worker.take_output(0)  # anything printed while starting is not the learner's
        self.isolation = ready["ready"].get("isolation")
        self.worker_start = worker.started_by
        self._worker = worker
        self.generation += 1
        self._methods = {}
        self._imported = set()
        self._package_ready = False
        return worker

    def _new_worker(self) -> WorkerHandle:
        try:
            worker = WorkerHandle(
                self.package_dir,
                self.package,
                memory_mb=self.limits.memory_mb,
                file_mb=self.limits.file_mb,
                hide=self.hide_paths,
                startup_timeout=self.limits.startup_timeout,
            )
        except PackageTooLarge:
            feedback = messages.TOO_LARGE.format(
                expected=self.display_dir, mb=MAX_PACKAGE_BYTES // 2**20
            )
            self._start_failure = LearnerError(kind="import_error", feedback=feedback)
            raise self._start_failure from None
        return worker

    def _handshake(self, worker: WorkerHandle) -> dict:
        """Send the init frame and wait for the worker's ready message."""
        init = {
            "package": self.package,
            "root": str(worker.root),
            "shown_dir": self.display_dir,
            "forbidden": list(self.forbidden_apis),
            "refused": worker.copy.refused,
            "skip_init": self._skip_init,
            "max_bytes": self.limits.max_wire_bytes,
            "max_depth": self.limits.max_wire_depth,
        }
        worker.conn.send_bytes(wire.dumps(init))
        if not worker.conn.poll(self.limits.startup_timeout):
            raise TimeoutError(f"no answer within {self.limits.startup_timeout:g} s")
        ready = wire.loads(worker.conn.recv_bytes())
        if not ready.get("ok"):
            raise RuntimeError(ready.get("internal", "no ready message"))
        return ready

    def _stop_worker(self) -> None:
        worker, self._worker = self._worker, None
        self._pending_release = []
        self._remotes = weakref.WeakValueDictionary()
        if worker is not None:
            worker.kill()
            self._collect_output(worker)
            worker.close()

    def _collect_output(self, worker: WorkerHandle | None = None) -> str:
        worker = worker or self._worker
        if worker is None:
            return ""
        cap = self.limits.output_kb * 1024
        head, total = worker.take_output(cap)
        if not total:
            return ""
        text = self._shown_paths(head.decode("utf-8", errors="replace"), worker)
        text = messages.sanitize(text, cap=cap)
        if total > len(head):
            text += f"\n[... {total - len(head)} more bytes of output not shown]\n"
        if self._test is not None:
            self._test.add_output(text)
        return text

    def _shown_paths(self, text: str, worker: WorkerHandle) -> str:
        """The worker's private copy named as the learner's repository names it: a warning
        printed at ``/tmp/autograder-x/root/t101/softmax.py:38`` reads
        ``assignments/t101/softmax.py:38``, as the failure messages do."""
        root = f"{str(worker.root).rstrip('/')}/"
        if root not in text:
            return text
        return re.sub(
            re.escape(root) + r"[^/\s]+/", lambda _: f"{self.display_dir.rstrip('/')}/", text
        )

    # -- imports ----------------------------------------------------------------------------

    def _file_of(self, name: str) -> str:
        """The module's file as messages name it: under display_dir, as the learner's
        repository names it."""
        return f"{self.display_dir.rstrip('/')}/{name.replace('.', '/')}.py"

    def _ensure_package(self) -> None:
        while not self._package_ready:
            label = f"{IMPORT_LABEL}{self._file_of('__init__')}"
            try:
                response = self._request({"op": "import_package"}, label=label, phase="import")
            except LearnerError as err:
                if err.kind not in ("timeout", "crash") or self._skip_init:
                    raise
                self.package_init_error = err
                self._skip_init = True  # the next worker uses a bare package instead
                continue
            self._package_ready = True
            if response.get("init_error"):
                self.package_init_error = failures.from_worker(
                    response["init_error"], f"Importing {self._file_of('__init__')}"
                )

    def _ensure_module(self, name: str) -> None:
        failure = self._import_failures.get(name)
        if failure is not None:
            raise failure
        self._ensure_package()
        if name in self._imported:
            return
        request = {"op": "import", "module": name}
        try:
            self._request(request, label=f"{IMPORT_LABEL}{self._file_of(name)}", phase="import")
        except LearnerError as err:
            if err.kind == "forbidden":
                self._imported.add(name)
            else:
                self._import_failures[name] = err
            raise
        self._imported.add(name)

    # -- values -----------------------------------------------------------------------------

    def _encode(self, value: Any) -> Any:
        return wire.encode(
            value,
            on_other=self._ref_of,
            max_bytes=self.limits.max_wire_bytes,
            max_depth=self.limits.max_wire_depth,
        )

    def _ref_of(self, obj: Any) -> tuple:
        if not isinstance(obj, RemoteObject):
            raise wire.WireError(f"a {type(obj).__qualname__} cannot be sent to the learner's code")
        self._check_alive(obj)
        return ("ref", obj._ref_id, obj._type_name, obj._label)

    def _check_alive(self, obj: RemoteObject) -> None:
        if obj._session is not self or obj._generation != self.generation or not self._worker:
            raise failures.stale(obj._type_name)

    def _decode(self, tree: Any, label: str) -> Any:
        """A value the worker sent for the call ``label``; its bad return when it cannot be."""

        def make(ref_id: int, type_name: str, ref_label: str) -> RemoteObject:
            remote = self._remotes.get(ref_id)
            if remote is None:
                remote = RemoteObject(self, ref_id, type_name, ref_label, self.generation)
                self._remotes[ref_id] = remote
                if ref_id in self._pending_release:  # its last proxy died; it lives on now
                    self._pending_release.remove(ref_id)
            return remote

        try:
            return wire.decode(tree, on_ref=make, max_depth=self.limits.max_wire_depth)
        except (wire.WireError, ValueError, TypeError, OverflowError, RuntimeError) as error:
            # What the worker sent is learner-made (a subclass's shape, say): their mistake,
            # told as one, never the grader's error.
            raise failures.unreadable(label, error) from None

    # -- errors -----------------------------------------------------------------------------

    def _timeout_error(self, label: str) -> LearnerError:
        return failures.timeout(label, self._limit_of(label))

    def _limit_of(self, label: str) -> float:
        """The CPU seconds a call (or an import, by its label) is given."""
        if label.startswith(IMPORT_LABEL):
            return self.limits.import_timeout
        return self.limits.test_timeout

    def _note_forbidden(self, records: list[Record]) -> None:
        for record in records:
            self._forbidden.setdefault(record, None)
            if self._test is not None:
                self._test.add_forbidden(record)


def _cpu_count(value: Any) -> float | None:
    """A worker's CPU seconds as its answer gives them; None unless a finite number >= 0
    (learner code runs in that process and may have changed what it reports)."""
    if type(value) is not float or not math.isfinite(value) or value < 0:
        return None
    return value


def _call_fields(args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    return {"args": args, "kwargs": kwargs, "args_back": False}


class _PartLabels:
    """How a request about several parts names each one."""

    def label(self, part: int, type_name: str | None = None) -> str | None:
        raise NotImplementedError


class _ChainLabels(_PartLabels):
    """set_standins and chain: the labels of the first parts, known before the request (each
    stand-in's ``Setting EncoderLayer.self_attn``, or a chain's first call
    ``MultiHeadAttention(...)``), then each step as a method call of the object's type
    (``MultiHeadAttention.eval(...)``), as RemoteMethod names it; the type of an object the
    first call builds comes with the worker's answer or progress frame."""

    def __init__(self, first: Sequence[str], names: Sequence[str], type_name: str | None):
        self.first = list(first)
        self.names = list(names)
        self.type_name = type_name

    @property
    def first_label(self) -> str:
        return self.label(0) or "object"

    def label(self, part: int, type_name: str | None = None) -> str | None:
        if 0 <= part < len(self.first):
            return self.first[part]
        part -= len(self.first)
        if not 0 <= part < len(self.names):
            return None
        short = (type_name or self.type_name or "object").rsplit(".", 1)[-1]
        return f"{short}.{self.names[part]}(...)"


def _expect_module(obj: Any) -> None:
    """A plain value where a learner module should be (a part that is None) fails as the
    learner's mistake, not as the grader's AttributeError on the value's missing methods."""
    if not isinstance(obj, RemoteObject):
        raise failures.not_a_module(obj)


class _Progress:
    """The progress frames of one request (handler.op_chain): the part now running and the type
    of the object it is about. A frame that is not a well-formed, forward-moving progress
    frame is left for the caller to read as the answer (or reject as garbled)."""

    def __init__(self) -> None:
        self.part = 0
        self.type_name: str | None = None

    def read(self, frame: bytes, labels: _PartLabels) -> bool:
        if b"progress" not in frame:
            return False
        try:
            tree = wire.loads(frame, max_depth=4)
        except wire.WireError:
            return False
        if not isinstance(tree, dict) or set(tree) != {"progress", "type"}:
            return False
        part, type_name = tree["progress"], tree["type"]
        if type(part) is not int or part <= self.part or type(type_name) is not str:
            return False
        if labels.label(part, type_name) is None or len(type_name) > 1000:
            return False
        self.part, self.type_name = part, type_name
        return True
