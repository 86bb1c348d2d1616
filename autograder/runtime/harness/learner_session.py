"""LearnerSession: the proxy graders and the pytest plugin use to run learner code.

The session is the grader-facing API; what it stands on is in smaller modules: the request
channel to the worker (worker_channel.py: starting it, the time budget, time-outs, crashes),
what the harness knows of the worker's objects (remote_refs.py) and of its imports
(package_imports.py), and the requests that fuse several calls (fused_requests.py).

At most one worker at a time, started lazily. A time-out or a crash kills its process group and
raises a LearnerError; the next request starts a fresh worker, which imports modules again
(package_imports.py); objects made by the dead one are lost (their use raises kind "crash").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import torch

from autograder.runtime.harness import failures, fused_requests, standin_custody
from autograder.runtime.harness.fused_requests import Part, Step
from autograder.runtime.harness.limits import Limits
from autograder.runtime.harness.package_imports import PackageImports
from autograder.runtime.harness.part_labels import PartLabels
from autograder.runtime.harness.remote import CallResult, RemoteCallable, RemoteModule, RemoteObject
from autograder.runtime.harness.remote_refs import RemoteRefs
from autograder.runtime.harness.trace import Record, TestTrace, unexplained
from autograder.runtime.harness.worker_channel import WorkerChannel
from autograder.runtime.shared.errors import LearnerError

DEFAULT_FORBIDDEN_MESSAGE = (
    "This course asks you to build this part yourself, so {api} may not be used here."
)
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

    ``hide_paths``: folders learner code must not see (the course, its references and hidden
    tests), with the harness's folder and home and the submission where the platform allows
    (``isolation`` says what the worker did: runtime/harness/isolation.py).
    ``standins``: the course's stand-ins file's text, or None; ``.standins``: its registry here.
    ``modules``: the course's module names: the files a hidden test's sentence may name, and the
    modules that may be placeholders while another imports (package_imports.py).
    A worker handed one never runs a test of another stage (``begin_test``: standin_custody.py).
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
        tamper_evidence: str = "",
        standins: str | None = None,
        modules: Sequence[str] = (),
    ) -> None:
        self.package_dir = Path(package_dir)
        self.package = package
        self.forbidden_apis = tuple(forbidden_apis)
        self.forbidden_message = forbidden_message
        self.display_dir = display_dir if display_dir is not None else str(package_dir)
        self.forbidden_raises = forbidden_raises
        self.hide_paths = tuple(Path(p) for p in hide_paths)
        self._forbidden: dict[Record, None] = {}
        self._channel = WorkerChannel(
            self.package_dir,
            package=package,
            limits=limits,
            display_dir=self.display_dir,
            forbidden_apis=self.forbidden_apis,
            hide_paths=self.hide_paths,
            on_worker_change=self._forget_worker,
            tamper_evidence=tamper_evidence,
        )
        self._custody = standin_custody.StandInCustody(standins, self._channel)
        self.standins = self._custody.registry
        self._refs = RemoteRefs(self, self._channel, limits)
        self._imports = PackageImports(self._channel, self.display_dir, self._request, modules)
        self._files = frozenset(self._imports.file_of(name) for name in modules)
        self._channel.module_files = self._files

    @property
    def limits(self) -> Limits:
        """The limits of every later request (they may be changed between requests)."""
        return self._channel.limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        self._channel.limits = limits
        self._refs.limits = limits

    @property
    def isolation(self) -> dict[str, Any] | None:
        """What the last worker did to confine itself (worker/confine.confine's report)."""
        return self._channel.isolation

    @property
    def worker_start(self) -> str | None:
        """How the last worker started: "zygote" (forked warm) or "fresh" (a new interpreter)."""
        return self._channel.worker_start

    @property
    def generation(self) -> int:
        """How many workers this session started; a RemoteObject is valid in its own only."""
        return self._channel.generation

    @property
    def package_init_error(self) -> LearnerError | None:
        """The LearnerError of the package's ``__init__.py``, if executing it failed."""
        return self._imports.package_init_error

    @property
    def unavailable(self) -> dict[str, list[str]]:
        """{module: the failed course modules that were placeholders as it imported}."""
        return self._imports.unavailable

    @property
    def answer_bytes(self) -> int:
        """Bytes of worker answers read since the plugin last freed the harness's memory."""
        return self._channel.answer_bytes

    @answer_bytes.setter
    def answer_bytes(self, value: int) -> None:
        self._channel.answer_bytes = value

    # -- public API -------------------------------------------------------------------------

    def module(self, name: str) -> RemoteModule:
        """``<package>.<name>``, imported in the worker at the first call into it."""
        if not _MODULE_NAME.fullmatch(name):
            raise ValueError(f"Expected a module name such as 'softmax', got {name!r}.")
        return RemoteModule(self, name)

    def begin_test(self, name: str, stage: str | None = None) -> None:
        """Start a test: a fresh time budget of ``limits.test_timeout`` and output buffer. Its
        ``stage`` ("visible", "hidden"; None: as before): a worker handed a stand-in in another
        stage is stopped first, so that a fresh one runs this test."""
        self._custody.begin_stage(stage)
        self._channel.budget.begin_test(name)

    def end_test(self) -> TestTrace:
        """End the test started by begin_test; return its output, forbidden calls, time-out."""
        return self._channel.budget.end_test()

    @property
    def forbidden_seen(self) -> tuple[Record, ...]:
        """Every (api, file relative to the package dir, line[, within]) recorded so far."""
        return tuple(self._forbidden)

    def parameter_grads(
        self, obj: RemoteObject, *args: Any, cotangent: Any, **kwargs: Any
    ) -> dict[str, torch.Tensor | None]:
        """Run ``obj(*args, **kwargs)`` with grad, backprop ``(first output * cotangent).sum()``
        and return each parameter's gradient (None where no gradient reached it)."""
        failures.expect_module(obj, RemoteObject)
        fields = {"args": args, "kwargs": kwargs, "cotangent": cotangent}
        label = f"{obj._label}(...)"
        response = self._run("parameter_grads", obj._target, label, fields, owner=obj)
        return self._decode(response["value"], label)

    def parameters(self, obj: RemoteObject) -> list[ParameterInfo]:
        """``named_parameters(remove_duplicate=False)`` of a remote module, without the data."""
        failures.expect_module(obj, RemoteObject)
        label = f"{obj._short_type}.named_parameters()"
        response = self._run("parameters", obj._target, label, {}, owner=obj)
        infos = self._decode(response["value"], label)
        return [ParameterInfo(n, tuple(s), d, k) for n, s, d, k in infos]

    def set_standin(
        self, obj: RemoteObject, path: str, kind: str, config: dict[str, Any], state: Any
    ) -> None:
        """Set ``obj.<path>`` ("self_attn", "layers.0") in the worker to the course's stand-in
        ``kind`` (``config``, state dict ``state``); calls of ``obj`` may then reach a forbidden
        API through it without being recorded. An unknown kind is a grader error."""
        self.set_standins(obj, [(path, kind, config, state)])

    def set_standins(
        self,
        obj: RemoteObject,
        parts: Sequence[Part],
        then: Sequence[Step] = (),
    ) -> None:
        """``set_standin`` for each ``(path, kind, config, state)`` of ``parts``, in order, in
        one request. The first part that fails stops the rest and raises what set_standin
        would have raised for it; a time-out or crash names the first part. ``then``: method
        calls on ``obj`` made after them in the same request, as ``chain`` makes them
        (``[("eval", (), {})]``)."""
        fused_requests.set_standins(self, obj, parts, then)

    def stand_in_function(self, module: str, name: str, *, source: str, kind: str) -> bool:
        """Make learner module ``module`` (``"attention"``) call the course's function stand-in
        ``kind`` where it calls ``source``'s own ``name`` through a global (``from .softmax
        import softmax``, any alias), so its graders do not charge ``source``'s mistakes again.
        Lasts for this worker: call it in each test. Returns whether it replaced it (False when
        ``source`` does not import); a ``module`` that does not import raises its failure."""
        return standin_custody.stand_in_function(self, module, name, source=source, kind=kind)

    def build(
        self, factory: RemoteCallable | RemoteObject, *args: Any, state: Any = None, **kwargs: Any
    ) -> RemoteObject:
        """``factory(*args, **kwargs)``, then ``.load_state_dict(state)`` when ``state`` is not
        None, then ``.eval()``, in one request; returns the module (a RemoteObject). Failures
        read as those of the three separate calls: a learner error, time-out or crash names
        the call that failed (``MultiHeadAttention.load_state_dict(...)``)."""
        return fused_requests.build(self, factory, args, kwargs, state)

    def chain(self, obj: RemoteObject, steps: Sequence[Step]) -> list:
        """``[obj.name(*args, **kwargs) for name, args, kwargs in steps]``, in order, in one
        request (``[("load_state_dict", (state,), {}), ("eval", (), {})]``); the first call
        that fails stops the rest and raises what it would have raised alone."""
        if not isinstance(obj, RemoteObject):
            return fused_requests.steps_here(obj, steps)
        _, values = fused_requests.chain(self, obj._target, None, None, steps, obj)
        return values

    def ping(self) -> bool:
        """Start the worker if needed and check that it answers."""
        answer = self._request_with_output({"op": "ping"}, label="ping", phase="test")[0]
        return answer["value"] == "pong"

    def close(self) -> None:
        """Kill the worker and delete its private copy; idempotent."""
        self._channel.close()

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
        return self._refs.has_method(obj, name)

    def _release(self, obj: RemoteObject) -> None:
        self._refs.release(obj)

    def _file_of(self, name: str) -> str:
        return self._imports.file_of(name)

    def _decode(self, tree: Any, label: str) -> Any:
        return self._refs.decode(tree, label)

    # -- requests ---------------------------------------------------------------------------

    def _run(
        self,
        op: str,
        target: list[Any],
        label: str,
        fields: dict[str, Any],
        owner: RemoteObject | None = None,
        part_labels: PartLabels | None = None,
    ) -> dict[str, Any]:
        return self._run_with_output(op, target, label, fields, owner, part_labels)[0]

    def _run_with_output(
        self,
        op: str,
        target: list[Any],
        label: str,
        fields: dict[str, Any],
        owner: RemoteObject | None,
        part_labels: PartLabels | None = None,
    ) -> tuple[dict[str, Any], str]:
        """A request about ``target`` (a learner module's name, or a worker object): no worker
        is started for a module that failed to import or a call struck out for its time-outs."""
        if owner is not None:
            self._refs.check_alive(owner)
        if target[0] == "module" and target[1] in self._imports.failures:
            raise self._imports.failures[target[1]]  # without starting a worker for nothing
        self._channel.budget.refuse_early(label)  # also without starting a worker for nothing
        self._channel.ensure_worker()
        if target[0] == "module":
            self._imports.ensure_module(target[1])
        if owner is not None:
            self._refs.check_alive(owner)
        encoded = {key: self._refs.encode(value) for key, value in fields.items()}
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
        part_labels: PartLabels | None = None,
    ) -> tuple[dict[str, Any], str]:
        """One round trip (WorkerChannel.round_trip), then what its answer says: forbidden
        calls recorded, method names learned, and the learner's error (naming the part of a
        fused request the worker says failed) or the grader's own raised."""
        answer = self._channel.round_trip(
            request, label=label, phase=phase, part_labels=part_labels
        )
        response, label = answer.response, answer.label
        records = response["forbidden"]
        self._note_forbidden(records)
        self._refs.learn_methods(response.get("methods"))
        home = response.get("home")  # below: and not inside a forbidden API the learner called
        own = [r[:3] for r in unexplained(records, self._forbidden) if r[1] == home]
        if own and self.forbidden_raises:  # made in the called code's own file
            raise failures.forbidden(
                own, shown_dir=self.display_dir, course_message=self.forbidden_message
            )
        if not response["ok"]:
            failed = (response, label, part_labels, self.limits, self._files)
            raise failures.of_failed_answer(*failed, self._custody.withheld())
        return response, answer.output

    def _forget_worker(self) -> None:
        """The worker stopped or was replaced (WorkerChannel.on_worker_change)."""
        self._refs.forget_worker()
        self._imports.forget_worker()

    def _note_forbidden(self, records: list[Record]) -> None:
        for record in records:
            self._forbidden.setdefault(record, None)
            if self._channel.test is not None:
                self._channel.test.add_forbidden(record)
