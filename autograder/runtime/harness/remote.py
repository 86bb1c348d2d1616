"""The proxies a grader holds for things that live in the worker.

``session.module("softmax").softmax`` is a RemoteCallable (nothing is imported until it is called);
an object the learner's code returns that is not a plain value (an ``nn.Module``, a bound method)
comes back as a RemoteObject. Attribute access on a RemoteObject is a remote getattr that returns
a value or another RemoteObject; calling either one runs it in the worker. A name under which the
object's class has a Python function (``m.eval``, ``m.load_state_dict``) gives a RemoteMethod
instead, without a request: calling it reads and calls the method in one request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autograder.runtime.harness.learner_session import LearnerSession


@dataclass
class CallResult:
    """What one call returned, and the worker's copies of its arguments after the call.

    Attributes:
        value: the return value (arrays and tensors are fresh copies).
        args: the positional arguments as the learner's code left them (to check "x unchanged").
        kwargs: the keyword arguments likewise.
        output: what the learner's code printed during the call (capped).
    """

    value: Any
    args: tuple
    kwargs: dict[str, Any]
    output: str


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class RemoteModule:
    """A learner module, ``t101.<name>``; imported in the worker at the first call into it."""

    __slots__ = ("_session", "_name")

    def __init__(self, session: LearnerSession, name: str) -> None:
        self._session = session
        self._name = name

    def __getattr__(self, attr: str) -> RemoteCallable:
        if _is_dunder(attr):
            raise AttributeError(attr)
        return RemoteCallable(self._session, self._name, attr)

    def __repr__(self) -> str:
        return f"<RemoteModule {self._session.package}.{self._name}>"


class RemoteCallable:
    """``module.<qualname>`` in the worker: a learner function or class, resolved lazily."""

    __slots__ = ("_session", "_module", "_qualname")

    def __init__(self, session: LearnerSession, module: str, qualname: str) -> None:
        self._session = session
        self._module = module
        self._qualname = qualname

    def __getattr__(self, attr: str) -> RemoteCallable:
        if _is_dunder(attr):
            raise AttributeError(attr)
        return RemoteCallable(self._session, self._module, f"{self._qualname}.{attr}")

    @property
    def _target(self) -> list[Any]:
        return ["module", self._module, self._qualname]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._session._call_value(self._target, f"{self._qualname}(...)", args, kwargs)

    def call(self, *args: Any, **kwargs: Any) -> CallResult:
        """Call it; also return the arguments after the call and the learner's output."""
        return self._session._call(self._target, f"{self._qualname}(...)", args, kwargs)

    def build(self, *args: Any, state: Any = None, **kwargs: Any) -> Any:
        """``m = cls(*args, **kwargs)``, ``m.load_state_dict(state)`` (when ``state`` is given)
        and ``m.eval()`` in one request (LearnerSession.build); returns ``m``."""
        return self._session.build(self, *args, state=state, **kwargs)

    def fetch(self) -> Any:
        """The attribute's value itself (a constant, or a RemoteObject), without calling it."""
        file = self._session._file_of(self._module)
        return self._session._getattr(self._target, None, f"Reading {self._qualname} from {file}")

    def __repr__(self) -> str:
        return f"<RemoteCallable {self._session.package}.{self._module}.{self._qualname}>"


class RemoteObject:
    """An object that stays in the worker (a reference). Valid only in the worker that made it."""

    __slots__ = ("_session", "_ref_id", "_type_name", "_label", "_generation", "__weakref__")

    def __init__(
        self, session: LearnerSession, ref_id: int, type_name: str, label: str, generation: int
    ) -> None:
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_ref_id", ref_id)
        object.__setattr__(self, "_type_name", type_name)
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "_generation", generation)

    @property
    def _short_type(self) -> str:
        return self._type_name.rsplit(".", 1)[-1]

    @property
    def _target(self) -> list[Any]:
        return ["ref", self._ref_id]

    def __getattr__(self, name: str) -> Any:
        if _is_dunder(name):  # Python's own probes (__array__, __deepcopy__...) stay local
            raise AttributeError(name)
        return self._attr_or_method(name)

    def _attr_or_method(self, name: str) -> Any:
        if self._session._has_method(self, name):
            return RemoteMethod(self, name)
        return self._remote_attr(name)

    def _remote_attr(self, name: str) -> Any:
        return self._session._getattr(
            self._target, name, f"Reading {self._short_type}.{name}", owner=self
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"Cannot set {name} on a {self._short_type} that lives in the learner's process; "
            "call one of its methods instead."
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        label = f"{self._label}(...)"
        return self._session._call_value(self._target, label, args, kwargs, owner=self)

    def call(self, *args: Any, **kwargs: Any) -> CallResult:
        """Call it; also return the arguments after the call and the learner's output."""
        return self._session._call(self._target, f"{self._label}(...)", args, kwargs, owner=self)

    def __len__(self) -> int:
        """``len()`` of the remote object (e.g. an ``nn.ModuleList``)."""
        return self._attr_or_method("__len__")()

    def __getitem__(self, key: Any) -> Any:
        """``obj[key]`` in the worker (e.g. ``layers[0]``: another RemoteObject)."""
        return self._attr_or_method("__getitem__")(key)

    def __iter__(self) -> Any:
        raise TypeError(
            f"A {self._short_type} in the learner's process cannot be iterated from the grader; "
            "use range(len(obj)) and obj[i]."
        )

    def __bool__(self) -> bool:
        return True  # never a remote len() just to test truth

    def __repr__(self) -> str:
        return f"<RemoteObject {self._type_name} #{self._ref_id}>"

    def __del__(self) -> None:
        session = getattr(self, "_session", None)
        if session is not None:
            try:
                session._release(self)
            except Exception:
                pass


class RemoteMethod:
    """``obj.name`` where obj's class defines a function ``name``: calling it is one request
    (the worker reads the attribute and calls it, exactly as ``obj.name(...)`` would). Any
    other use reads the attribute first (``fetch``), as RemoteObject attribute access does."""

    __slots__ = ("_owner", "_name")

    def __init__(self, owner: RemoteObject, name: str) -> None:
        self._owner = owner
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        owner = self._owner
        label = f"{owner._short_type}.{self._name}(...)"
        target = ["attr", owner._ref_id, self._name]
        return owner._session._call_value(target, label, args, kwargs, owner=owner)

    def call(self, *args: Any, **kwargs: Any) -> CallResult:
        """Call it; also return the arguments after the call and the learner's output."""
        owner = self._owner
        label = f"{owner._short_type}.{self._name}(...)"
        target = ["attr", owner._ref_id, self._name]
        return owner._session._call(target, label, args, kwargs, owner=owner)

    def fetch(self) -> Any:
        """The attribute itself (a RemoteObject for the bound method), read from the worker."""
        return self._owner._remote_attr(self._name)

    def __getattr__(self, name: str) -> Any:
        if _is_dunder(name):
            raise AttributeError(name)
        return getattr(self.fetch(), name)

    def __repr__(self) -> str:
        return f"<RemoteMethod {self._owner._short_type}.{self._name} of #{self._owner._ref_id}>"
