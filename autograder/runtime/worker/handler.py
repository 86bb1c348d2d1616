"""The worker's operations on learner code (see serve.py for the protocol).

Everything here runs inside the untrusted worker. Learner code runs only inside
``learner_block`` (learner_blocks.py), whose exceptions become LearnerError fields; any other
exception is a framework bug and is reported as ``internal``.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import types
from typing import Any

import numpy  # noqa: F401  (imported before learner code, like torch)
import torch

from autograder.runtime.shared import standin_registry, wire
from autograder.runtime.worker import guard
from autograder.runtime.worker.describe import describe, relative
from autograder.runtime.worker.importer import ImportFailure, LearnerImporter
from autograder.runtime.worker.learner_blocks import (
    LearnerFailed,
    bad_return,
    check_output,
    expect_instance,
    first_tensor,
)
from autograder.runtime.worker.learner_blocks import learner_block as _learner
from autograder.runtime.worker.learner_objects import LearnerObjects
from autograder.runtime.worker.module_tree import named_parameters
from autograder.runtime.worker.standin_loader import StandInLoader
from autograder.runtime.worker.unavailable_modules import unavailable

#: A stand-in's place: attribute names or ModuleList indices, dotted ("self_attn", "layers.0").
_STANDIN_PATH = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*")
_REF_TARGETS = ("ref", "attr")


class RequestHandler:
    """The worker's state between requests (learner objects by id, the importer, the guard) and
    one ``op_*`` method per request of the protocol (serve.py)."""

    def __init__(self, init: dict[str, Any], *, memory_mb: int) -> None:
        self.package = init["package"]
        self.root = init["root"]
        self.shown_dir = init["shown_dir"]  # the package folder as the learner names it
        self.memory_mb = memory_mb
        self.disk_mb = int(init.get("disk_mb") or 0)
        self.max_bytes = init["max_bytes"]
        self.max_depth = init["max_depth"]
        self.skip_init = bool(init.get("skip_init"))
        self.guarded = guard.install(init["forbidden"], f"{self.root}/{self.package}")
        #: this worker's own reference: learner code rebinding the module's names changes nothing
        self.guard = guard.current()
        sys.path.insert(0, self.root)
        self.importer = LearnerImporter(
            self.package,
            self.root,
            shown_dir=init["shown_dir"],
            refused=init["refused"],
            describe=self.describe,
        )
        self.table = LearnerObjects()
        #: the course's stand-ins: none until a request that sets one brings the file's text
        #: (load_standins), so that learner code cannot find them in a worker never handed one
        self.registry = standin_registry.StandInRegistry()
        self.standins_source: str | None = None
        self._load = StandInLoader()  # made before learner code can hook what it uses
        #: ref id of a learner object -> the stand-ins the harness installed in it
        self.standins: dict[int, list[torch.nn.Module]] = {}
        #: sends a progress frame to the harness (serve.serve sets it; see op_chain)
        self.progress: Any = None

    def ready_info(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "torch": str(torch.__version__), "guarded": self.guarded}

    def describe(self, exc: BaseException, phase: str) -> dict[str, Any]:
        return describe(
            exc,
            phase=phase,
            root=self.root,
            memory_mb=self.memory_mb,
            shown_dir=self.shown_dir,
            disk_mb=self.disk_mb,
        )

    # -- dispatch -------------------------------------------------------------------------

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        for ref_id in request.get("release", ()):
            self.release(ref_id)
        op = request["op"]
        if request.get("standins") and request["standins"] != self.standins_source:
            self.load_standins(request["standins"])
        self.guard.drain()
        self.home = None
        target = request.get("target")
        exempt = self.standins.get(target[1], ()) if target and target[0] in _REF_TARGETS else ()
        try:
            with self.guard.exempting(exempt, self.registry.forward_codes):
                response = {"ok": True, **getattr(self, f"op_{op}")(request)}
        except (ImportFailure, LearnerFailed) as failure:
            response = {"ok": False, "error": failure.error}
        response["forbidden"] = [list(record) for record in self.guard.drain()]
        broken = self.guard.intact()
        if broken:  # learner code undid a recorder: the harness fails the test as tampering
            response["tampered"] = broken
        response["home"] = self.home
        if self.table.new_methods:
            response["methods"] = self.table.take_new_methods()
        return response

    def load_standins(self, source: str) -> None:
        """Run the course's stand-ins file (its text, from the harness) in this worker: once,
        or again when the harness sends more of it (the whole file after its functions)."""
        self.registry = self._load(source)
        self.standins_source = source

    def op_ping(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"value": "pong"}

    def op_release(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"value": None}

    def op_import_package(self, request: dict[str, Any]) -> dict[str, Any]:
        self.importer.import_package(skip_init=self.skip_init)
        return {
            "value": None,
            "init_error": self.importer.init_error,
            "package_missing": self.importer.package_missing,
        }

    def op_import(self, request: dict[str, Any]) -> dict[str, Any]:
        """Import one module; the ``unavailable`` ones (that failed to import on their own)
        are placeholders while it imports (unavailable_modules.py)."""
        self.home = self.file_in_package(self.importer.file_of(request["module"]))
        files = {name: self.importer.shown_file_of(name) for name in request.get("unavailable", ())}
        with unavailable(self.importer.package, files):
            module = self.importer.import_module(request["module"])
        self.home = self.home_file(module)
        return {"value": None}

    def op_call(self, request: dict[str, Any]) -> dict[str, Any]:
        function = self.target(request["target"])
        args, kwargs = self.decode(request["args"]), self.decode(request["kwargs"])
        with _learner(self, "call"):
            result = function(*args, **kwargs)
        expect_instance(function, result)
        if request.get("args_back", True) is False:  # a plain f(x): the value only
            return {"value": self.encode(result)}
        return {
            "value": self.encode(result),
            "args": self.encode(args),
            "kwargs": self.encode(kwargs),
        }

    def op_getattr(self, request: dict[str, Any]) -> dict[str, Any]:
        obj = self.target(request["target"])
        if request["name"] is None:  # the target itself: a module-level constant
            return {"value": self.encode(obj)}
        with _learner(self, "call"):
            value = getattr(obj, request["name"])
        return {"value": self.encode(value)}

    def op_parameters(self, request: dict[str, Any]) -> dict[str, Any]:
        module = self.module_target(request["target"])
        with _learner(self, "call"):
            params = named_parameters(module, remove_duplicate=False)
            rows = [
                (name, tuple(p.shape), p.dtype, p.untyped_storage().data_ptr())
                for name, p in params
            ]
        return {"value": self.encode(rows)}

    def op_parameter_grads(self, request: dict[str, Any]) -> dict[str, Any]:
        module = self.module_target(request["target"])
        args, kwargs = self.decode(request["args"]), self.decode(request["kwargs"])
        cotangent = self.decode(request["cotangent"])
        with _learner(self, "call"):
            params = dict(named_parameters(module))
            for p in params.values():
                p.grad = None
            with torch.enable_grad():
                output = first_tensor(module(*args, **kwargs))
                check_output(output, cotangent)
                (output * cotangent).sum().backward()
            grads = {
                name: None if p.grad is None else p.grad.detach().clone()
                for name, p in params.items()
            }
            for p in params.values():
                p.grad = None
        return {"value": self.encode(grads)}

    def op_set_standins(self, request: dict[str, Any]) -> dict[str, Any]:
        """Set each part's ``target.<path>`` to a stand-in the course's registry builds from plain
        data (``parts``: [{path, kind, config, state}]), in order, in one request (a layer's four
        sublayers); requests about ``target`` may then call them through the guard. The first
        part that fails stops the rest, as separate requests would: its error carries its
        index as ``part``, so the harness names that part's path. Then ``steps``, if any, as
        op_chain runs them (``eval()`` of the module): value [each step's return value]."""
        scope = self.module_target(request["target"])
        ref_id = request["target"][1]
        parts = request["parts"]
        for index, part in enumerate(parts):
            try:
                self.set_standin(scope, ref_id, part)
            except LearnerFailed as failure:
                failure.error["part"] = index
                raise
        if not request.get("steps"):
            return {"value": None}
        with self.guard.exempting(self.standins.get(ref_id, ()), self.registry.forward_codes):
            values = self.run_steps(scope, request, len(parts))  # as a request of their own
        return {"value": values}

    def op_stand_in_function(self, request: dict[str, Any]) -> dict[str, Any]:
        """Replace each global of learner module ``module`` that is learner module ``source``'s
        function ``name`` (a plain function defined there), as ``from .softmax import softmax``
        or ``... import softmax as sm`` binds it, by the function stand-in ``kind``
        (the course's FUNCTIONS). Anything else stays: the module's own function, a re-export from
        elsewhere, an object that is not a module or a function, a signature the stand-in
        cannot honour. Value: whether it replaced one. Both modules are imported already (the
        harness asks after importing them)."""
        name, kind = request["name"], request["kind"]
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Expected a global name such as 'softmax', got {name!r}.")
        self.registry.function(kind, len)  # an unknown kind is the grader's error, raised here
        module = self.importer.import_module(request["module"])
        source = self.importer.import_module(request["source"])
        # Plain modules only: a module subclass or an object in sys.modules could run learner
        # code on attribute access, or show the graders another softmax than its dict holds.
        if type(module) is not types.ModuleType or type(source) is not types.ModuleType:
            return {"value": False}
        names, own = module.__dict__, source.__dict__.get(name)
        defined_there = type(own) is types.FunctionType and own.__globals__ is source.__dict__
        bound = [key for key, value in names.items() if value is own] if defined_there else []
        if not bound:  # H46: also under another name (from .softmax import softmax as sm)
            return {"value": False}
        with _learner(self, "call"):  # inspect reads the learner's function (__signature__)
            standin = self.registry.function(kind, own)
        if standin is None:
            return {"value": False}
        for key in bound:
            names[key] = standin
        return {"value": True}

    def op_chain(self, request: dict[str, Any]) -> dict[str, Any]:
        """Method calls on one object in one request: the target itself, or what calling it
        with ``call`` ({args, kwargs}) returns (a class: the object it builds), then each of
        ``steps`` ([{name, args, kwargs}]) on it in order, as ``obj.name(*args, **kwargs)``
        would be. Part 0 is the first call (or the first step); a failure carries its
        ``part`` and the object's ``type``, and before each later part a progress frame
        ``{"progress": part, "type": ...}`` goes out, so a time-out or crash names the step
        that was running, as separate requests would.

        A step runs here only where a separate call would have been one request too: its name is a
        function of the object's class (learner_objects.method_names) and no other class shares that
        class's name, and its label is not in ``stop`` (calls the harness no longer runs after
        time-outs). The chain ends before any other step; the harness makes those calls itself.
        Value: [the object, each step's return value]."""
        obj = self.target(request["target"])
        call = request.get("call")
        if call is None:
            return {"value": [self.encode(obj), *self.run_steps(obj, request, 0)]}
        call = self.decode(call)
        with _learner(self, "call"):
            made = obj(*call["args"], **call["kwargs"])
        expect_instance(obj, made)
        obj = made
        first = self.encode(obj)
        return {"value": [first, *self.run_steps(obj, request, 1)]}

    def run_steps(self, obj: Any, request: dict[str, Any], part: int) -> list[Any]:
        """The request's ``steps`` on ``obj`` (see op_chain), numbered from ``part``; the
        encoded return values of those that ran."""
        kind = type(obj)
        type_name = f"{kind.__module__}.{kind.__qualname__}"
        names = self.table.step_names(kind, type_name)
        short = type_name.rsplit(".", 1)[-1]
        stop = request.get("stop") or ()
        values = []
        for step in self.decode(request["steps"]):
            name = step["name"]
            if name not in names or f"{short}.{name}(...)" in stop:
                break
            if part and self.progress is not None:
                self.progress({"progress": part, "type": type_name})
            self.home = self.home_file(obj)
            try:
                with _learner(self, "call"):
                    result = getattr(obj, name)(*step["args"], **step["kwargs"])
                values.append(self.encode(result))
            except LearnerFailed as failure:
                failure.error["part"] = part
                failure.error["type"] = type_name
                raise
            part += 1
        return values

    def set_standin(self, scope: torch.nn.Module, ref_id: int, part: dict[str, Any]) -> None:
        path = part["path"]
        if not isinstance(path, str) or not _STANDIN_PATH.fullmatch(path):
            raise ValueError(f"Expected a dotted attribute path such as 'layers.0', got {path!r}.")
        standin = self.registry.build(part["kind"], part["config"], self.decode(part["state"]))
        *parents, name = path.split(".")
        with _learner(self, "call"):
            host = scope
            for attr in parents:
                host = getattr(host, attr)
            getattr(host, name)  # a stand-in replaces a part the learner made; it adds none
            setattr(host, name, standin)
        self.standins.setdefault(ref_id, []).append(standin)

    # -- helpers ----------------------------------------------------------------------------

    def target(self, target: list[Any]) -> Any:
        """The object a request is about; sets ``self.home``, the file it belongs to.
        ``["attr", id, name]`` is ``getattr(object id, name)``, read as part of the request:
        a method call in one round trip (the harness sends it for the names
        learner_objects.method_names listed)."""
        if target[0] == "ref":
            obj = self.table.objects[target[1]]
            self.home = self.home_file(obj)
            return obj
        if target[0] == "attr":
            obj = self.table.objects[target[1]]
            self.home = self.home_file(obj)
            with _learner(self, "call"):
                return getattr(obj, str(target[2]))
        _, name, qualname = target
        module = self.importer.import_module(name)
        self.home = self.home_file(module)
        with _learner(self, "import"):
            return self.importer.resolve(module, name, qualname)

    def home_file(self, obj: Any) -> str | None:
        """The learner file (relative to the package dir) that defines ``obj``'s code: its
        module, its class's module, or its bound owner's class's module; None for library code.
        A forbidden call made in that file is the called component's own."""
        try:
            owner = getattr(obj, "__self__", None)
            if owner is not None and not inspect.ismodule(owner):
                obj = owner
            if inspect.ismodule(obj):
                module = obj
            else:
                name = obj.__module__ if inspect.isclass(obj) else type(obj).__module__
                module = sys.modules.get(name)
            return self.file_in_package(getattr(module, "__file__", None) or "")
        except Exception:
            return None

    def file_in_package(self, path: str) -> str | None:
        """``t101/softmax.py`` or an absolute path -> ``softmax.py``; None outside the package."""
        prefix = f"{self.package}/"
        if path.startswith(prefix):
            return path[len(prefix) :]
        shown = relative(path, self.root) if path else None
        return shown[len(prefix) :] if shown and shown.startswith(prefix) else None

    def module_target(self, target: list[Any]) -> torch.nn.Module:
        obj = self.target(target)
        if not isinstance(obj, torch.nn.Module):
            raise TypeError(f"Expected a torch.nn.Module, got {type(obj).__qualname__}.")
        return obj

    def decode(self, tree: Any) -> Any:
        return wire.decode(tree, on_ref=self.table.lookup, max_depth=self.max_depth)

    def encode(self, value: Any) -> Any:
        try:
            with _learner(self, "call"):
                return wire.encode(
                    value,
                    on_other=self.table.register,
                    max_bytes=self.max_bytes,
                    max_depth=self.max_depth,
                )
        except wire.WireError as exc:
            raise LearnerFailed(bad_return(str(exc))) from None

    def release(self, ref_id: int) -> None:
        self.table.release(ref_id)
        self.standins.pop(ref_id, None)
