"""The course's stand-ins file, run in a worker where learner code may have run already.

A worker loads the file at the first request that sets a stand-in, not at start, so learner code
in a worker never handed one finds none. By then learner code may have hooked class creation to
be shown every class the file defines: ``builtins.__build_class__``, ``torch.nn`` or
``torch.nn.Module`` rebound, or a ``torch.nn.Module.__init_subclass__``. The file runs with the
builtins, ``nn`` and ``Module`` the worker had at start; the learner's own are put back after.

Design: docs/internals/runtime.md#a-stand-in-is-not-kept-for-later-tests.
"""

from __future__ import annotations

import builtins
from typing import Any

import torch

from autograder.runtime.shared import standin_registry

_MISSING = object()


class StandInLoader:
    """Made before any learner code runs: what class creation depended on then."""

    def __init__(self) -> None:
        self.builtins = dict(vars(builtins))
        self.nn = torch.nn
        self.module = torch.nn.Module
        self.hook = torch.nn.Module.__dict__.get("__init_subclass__", _MISSING)
        self.load = standin_registry.load
        self.torch = torch

    def __call__(self, source: str) -> standin_registry.StandInRegistry:
        """The registry ``source`` defines, its classes made as at the worker's start."""
        saved = [
            (self.torch, "nn", self.nn),
            (self.nn, "Module", self.module),
            (self.module, "__init_subclass__", self.hook),
        ]
        learner_values = [_swap(owner, name, value) for owner, name, value in saved]
        try:
            return self.load(source, builtins=self.builtins)
        finally:
            for (owner, name, _), value in reversed(list(zip(saved, learner_values, strict=True))):
                _swap(owner, name, value)


def _swap(owner: Any, name: str, value: Any) -> Any:
    """Set ``owner.name`` to ``value`` (delete it for _MISSING); return what it was."""
    before = vars(owner).get(name, _MISSING)
    if before is not value:
        if value is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, value)
    return before
