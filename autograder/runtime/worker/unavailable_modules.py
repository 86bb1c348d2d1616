"""Modules of the learner's package that failed to import, standing in while another imports.

``encoder.py`` imports ``MultiHeadAttention`` from ``multi_head_attention.py`` at its top.
When that file cannot be imported, the harness imports the encoder again with it unavailable:
for the length of the import, ``sys.modules`` holds a module in its place whose public names
are placeholders, so that a correct encoder is not lost to its neighbour's mistake.

A capitalised name (as the contract names classes) gives an ``nn.Module`` built with any
arguments (the course's stand-ins replace it after construction) that raises ImportError when
called; any other name gives a function that raises ImportError. After the import the module
leaves ``sys.modules`` and the package, so nothing else finds it.

Design: docs/internals/runtime.md#a-module-that-failed-to-import.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from torch import nn

UNAVAILABLE = (
    "{name} is not available: {file}, which defines it, could not be imported (its own tests "
    "say why), so this file was imported with a placeholder in its place."
)


@contextmanager
def unavailable(package: str, modules: dict[str, str]) -> Iterator[None]:
    """Within the block, each ``package.<name>`` of ``modules`` ({name: file as shown}) that
    is not imported is a module of placeholders; afterwards it is gone again."""
    parent = sys.modules.get(package)
    placed = []
    for name, file in modules.items():
        full = f"{package}.{name}"
        if full in sys.modules:
            continue
        sys.modules[full] = _placeholder_module(full, file)
        set_on_parent = parent is not None and not hasattr(parent, name)
        if set_on_parent:
            setattr(parent, name, sys.modules[full])
        placed.append((full, name, set_on_parent))
    try:
        yield
    finally:
        for full, name, set_on_parent in placed:
            sys.modules.pop(full, None)
            if set_on_parent and parent is not None:
                vars(parent).pop(name, None)


def _placeholder_module(full: str, file: str) -> types.ModuleType:
    """A module whose public names are placeholders (PEP 562 ``__getattr__``)."""
    module = types.ModuleType(full, f"Placeholder for {file}, which could not be imported.")

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module {full!r} has no attribute {name!r}")
        sentence = UNAVAILABLE.format(name=name, file=file)
        return _placeholder_class(name, sentence) if name[:1].isupper() else _raiser(sentence)

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    return module


def _raiser(sentence: str) -> Any:
    def unavailable_function(*args: Any, **kwargs: Any) -> Any:
        raise ImportError(sentence)

    return unavailable_function


def _placeholder_class(name: str, sentence: str) -> type[nn.Module]:
    def __init__(self: nn.Module, *args: Any, **kwargs: Any) -> None:
        nn.Module.__init__(self)

    def forward(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
        raise ImportError(sentence)

    return type(name, (nn.Module,), {"__init__": __init__, "forward": forward})
