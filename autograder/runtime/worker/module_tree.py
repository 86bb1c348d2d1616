"""A module's parameters as torch registered them, read without calling any learner method.

``nn.Module.named_parameters`` is a method a learner's class can override (or whose helpers,
``named_modules`` and ``_named_members``, it can override): an override that returns fresh
copies made one ``EncoderLayer`` shared by every layer read as separate layers. Here the tree
is walked through the instances' own ``__dict__`` (``_modules`` and ``_parameters``, the plain
dicts ``nn.Module.__init__`` and ``__setattr__`` fill), in the order and with the names
``named_parameters`` gives, so that what the graders read is what ``forward`` can reach.

Runs in the worker: learner code can still rewrite these dicts themselves, but then its
``forward`` runs on what they hold, which the graders' calls and gradients check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

#: The most modules one walk visits: a module that holds itself (or a cycle) is cut off there
#: instead of recursing forever, as torch's own walk would with duplicates kept.
MAX_MODULES = 10_000


class TreeTooLarge(Exception):
    """The module tree has more than MAX_MODULES modules (or holds itself)."""


def named_parameters(
    module: torch.nn.Module, *, remove_duplicate: bool = True
) -> list[tuple[str, torch.nn.Parameter]]:
    """``module.named_parameters(remove_duplicate=...)`` as torch's own ``nn.Module`` computes
    it: (dotted name, parameter) in registration order, a module or parameter met again left
    out unless ``remove_duplicate`` is False. TreeTooLarge past MAX_MODULES modules."""
    seen_params: set[int] = set()
    found = []
    for prefix, owner in _named_modules(module, remove_duplicate):
        for name, param in _own_dict(owner, "_parameters").items():
            if param is None or (remove_duplicate and id(param) in seen_params):
                continue
            seen_params.add(id(param))
            found.append((f"{prefix}.{name}" if prefix else str(name), param))
    return found


def _named_modules(root: torch.nn.Module, remove_duplicate: bool) -> Iterator[tuple[str, Any]]:
    """(prefix, module) depth first, parents before children, as nn.Module.named_modules."""
    stack: list[tuple[str, Any]] = [("", root)]
    seen: set[int] = set()
    visited = 0
    while stack:
        prefix, module = stack.pop()
        if remove_duplicate:
            if id(module) in seen:
                continue
            seen.add(id(module))
        visited += 1
        if visited > MAX_MODULES:
            raise TreeTooLarge(f"more than {MAX_MODULES} modules")
        yield prefix, module
        children = [
            (f"{prefix}.{name}" if prefix else str(name), child)
            for name, child in _own_dict(module, "_modules").items()
            if child is not None
        ]
        stack.extend(reversed(children))


def _own_dict(module: Any, name: str) -> dict[Any, Any]:
    """The instance's own ``name`` dict (``_modules``, ``_parameters``) as a plain dict; empty
    when it is missing or not a dict. Read from ``__dict__`` without attribute lookup, so no
    property, ``__getattr__`` or ``__getattribute__`` of the learner's runs; a dict subclass is
    read through dict's own methods."""
    try:
        namespace = object.__getattribute__(module, "__dict__")
    except AttributeError:
        return {}
    value = dict.get(namespace, name) if isinstance(namespace, dict) else None
    return dict(dict.items(value)) if isinstance(value, dict) else {}
