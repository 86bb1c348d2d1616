"""The learner objects the harness holds references to, and what it was told of their types.

An object learner code returns that is not a plain value stays in the worker under an id; the
harness gets ``("ref", id, type name, call label)`` and, the first time a type is seen, the
names under which its class has a Python function (a method call is then one request). Names
learner code chose are capped in length before they are sent.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import torch

_MAX_METHOD_NAMES = 1000
_MAX_NAME = 200  # characters of a type name, call label or method name sent to the harness


class LearnerObjects:
    """The objects by id, and the method names sent (or still to send) for their types."""

    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}
        self.ids: dict[int, int] = {}
        self.next_id = 1
        #: type name -> the class described under it (None: several classes share that name);
        #: the names whose method names were sent; those not yet sent (see method_names)
        self.described: dict[str, type | None] = {}
        self.sent: set[str] = set()
        self.new_methods: dict[str, list[str]] = {}
        #: id(class) -> (class, its method_names): the steps op_chain may run
        self.method_sets: dict[int, tuple[type, frozenset[str]]] = {}

    def register(self, obj: Any) -> tuple:
        ref_id = self.ids.get(id(obj))
        if ref_id is None:
            ref_id = self.next_id
            self.next_id += 1
            self.objects[ref_id] = obj
            self.ids[id(obj)] = ref_id
        kind = type(obj)
        type_name = capped(f"{kind.__module__}.{kind.__qualname__}")
        known = self.described.setdefault(type_name, kind)
        if known is kind and type_name not in self.sent:
            self.sent.add(type_name)
            self.new_methods[type_name] = method_names(kind)
        elif known is not kind and self.described.get(type_name) is not None:
            # Two classes under one name (a class defined twice, or made in a function): no
            # method of that name is fused any more; obj.name(...) reads, then calls.
            self.described[type_name] = None
            self.new_methods[type_name] = []
        return ("ref", ref_id, type_name, capped(call_label(obj)))

    def release(self, ref_id: int) -> Any:
        """Forget object ``ref_id``; return it (None when unknown)."""
        obj = self.objects.pop(ref_id, None)
        if obj is not None:
            self.ids.pop(id(obj), None)
        return obj

    def lookup(self, ref_id: int, type_name: str, label: str) -> Any:
        return self.objects[ref_id]

    def take_new_methods(self) -> dict[str, list[str]]:
        """The method names of the types described since the last call, for the answer."""
        new, self.new_methods = self.new_methods, {}
        return new

    def step_names(self, kind: type, type_name: str) -> frozenset[str]:
        """The methods op_chain may call on an instance of ``kind`` as steps: those sent for
        its type, if no other class shares its name (else none)."""
        if self.described.get(type_name) is not kind:
            return frozenset()
        cached = self.method_sets.get(id(kind))
        if cached is None or cached[0] is not kind:
            cached = self.method_sets[id(kind)] = (kind, frozenset(method_names(kind)))
        return cached[1]


def method_names(kind: type) -> list[str]:
    """The names under which ``kind`` has a plain Python function (nn.Module's eval,
    load_state_dict, __getitem__ of a ModuleList...): reading one from an instance gives a bound
    method, which the harness may then call with an ``attr`` target instead of reading it
    first. Read from the class dictionaries along the MRO, as instance attribute lookup finds
    them, without dir() or getattr: no learner code runs (a metaclass's __dir__, a property,
    __getattr__, a str subclass's __hash__), so listing them cannot fail, hang or differ."""
    try:
        mro = type.__dict__["__mro__"].__get__(kind)
    except Exception:
        return []
    first: dict[str, object] = {}
    for klass in mro:
        namespace = type.__dict__["__dict__"].__get__(klass)
        for name, value in namespace.items():
            if type(name) is str and name not in first:
                first[name] = value
    names = [
        name
        for name, value in first.items()
        if type(value) is types.FunctionType and len(name) <= _MAX_NAME
    ]
    return names[:_MAX_METHOD_NAMES]


def capped(text: str) -> str:
    """A name learner code chose (a class's __qualname__ may be megabytes long), as sent."""
    return text if len(text) <= _MAX_NAME else text[: _MAX_NAME - 1] + "…"


def call_label(obj: Any) -> str:
    """How the learner would name a call of ``obj``: "MultiHeadAttention.forward" and so on."""
    try:
        if inspect.ismethod(obj) or inspect.isbuiltin(obj) and hasattr(obj, "__self__"):
            owner = obj.__self__
            owner_name = owner.__name__ if inspect.isclass(owner) else type(owner).__name__
            if inspect.ismodule(owner):
                return obj.__name__
            return f"{owner_name}.{obj.__name__}"
        if isinstance(obj, torch.nn.Module):
            return f"{type(obj).__name__}.forward"
        owner, name = getattr(obj, "__self__", None), getattr(obj, "__name__", None)
        if owner is not None and isinstance(name, str):  # method-wrapper: layers.__len__
            return f"{type(owner).__name__}.{name}"
        if inspect.isclass(obj) or inspect.isfunction(obj):
            return obj.__qualname__
        return f"{type(obj).__name__}.__call__" if callable(obj) else type(obj).__name__
    except Exception:
        return type(obj).__name__
