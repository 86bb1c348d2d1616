"""Expected values computed once: a memo for the graders' pure functions of values.

A function decorated with ``@expected_value`` is called once per distinct arguments; later
calls with equal arguments get an independent copy of the stored result::

    @expected_value
    def mha_mistakes(state, num_heads, query, key, value, mask=None): ...

- The key is the function's module and qualified name and a sha256 digest of its arguments
  (plain values only: tensors, arrays, numbers, strings and containers of them). Any other
  argument makes the call uncacheable; a result that is not made of values is not stored.
- A function that drew from the global random states is not stored (``stats.impure``, an
  ExpectedValueImpure warning); a call that raises stores nothing.
- Stores: an in-process dict, and in a batch the folder DIR/.expected (``use_folder``,
  ``refresh``), read with the wire codec, never with pickle. AUTOGRADER_NO_EXPECTED=1 turns the
  memo off.

Design: docs/internals/runtime.md#expected-values; security: SECURITY.md, "Expected values".
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
import shutil
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from autograder.atomic_files import atomic_write_bytes
from autograder.feedback import AnyOf
from autograder.runtime.shared import wire

__all__ = [
    "ExpectedValueImpure",
    "clear",
    "expected_value",
    "next_run",
    "refresh",
    "stats",
    "use_folder",
]

F = TypeVar("F", bound=Callable[..., Any])

ENTRY_SUFFIX = ".entry"
DISABLE = "AUTOGRADER_NO_EXPECTED"
ANY_OF = "\x00AnyOf"  # the key of the one-item dict that stands for an AnyOf in a stored tree
IMPURE = (
    "{name} drew from the global random generators, so its result was not stored: skipping it "
    "on a later call would change every later random draw of that test. Draw from an argument "
    "(a numpy Generator) or wrap the draw in torch.random.fork_rng, or remove @expected_value."
)


class ExpectedValueImpure(RuntimeWarning):
    """A decorated function consumed global randomness; its result was not stored."""


class _Uncacheable(Exception):
    """An argument or a result that is not a value."""


class Stats:
    """Counters for the tests and the report: hits, misses, calls passed through, impure
    functions by name, entries written to and read from the folder."""

    def __init__(self) -> None:
        self.hits = 0
        self.misses = 0
        self.passed_through = 0
        self.written = 0
        self.loaded = 0
        self.impure: Counter[str] = Counter()


stats = Stats()
_memory: dict[str, Any] = {}
_folder: Path | None = None
_seen: set[str] = set()  # entry files already in _memory (read by refresh, or written here)
_warned: set[str] = set()


def expected_value(function: F) -> F:
    """Decorate a pure function of values: computed once per distinct arguments (see above)."""
    name = f"{function.__module__}.{function.__qualname__}"

    @functools.wraps(function)
    def memo(*args: Any, **kwargs: Any) -> Any:
        if os.environ.get(DISABLE) == "1":
            return function(*args, **kwargs)
        try:
            key = _key(name, args, kwargs)
        except _Uncacheable:
            stats.passed_through += 1
            return function(*args, **kwargs)
        if key in _memory:
            stats.hits += 1
            return _copy(_memory[key])
        before = _random_states()
        result = function(*args, **kwargs)
        stats.misses += 1
        if not _same_states(before, _random_states()):
            stats.impure[name] += 1
            if name not in _warned:
                _warned.add(name)
                warnings.warn(IMPURE.format(name=name), ExpectedValueImpure, stacklevel=2)
            return result
        try:
            stored = _copy(result)
        except _Uncacheable:
            return result
        _memory[key] = stored
        _write(key, stored)
        return result

    return memo  # type: ignore[return-value]


def use_folder(folder: Path | None) -> None:
    """Share entries through `folder` (emptied, made 0700), or stop sharing (None). A batch's
    session process calls it once, before it forks any harness child. A folder that cannot
    be made means no sharing, never a failed batch."""
    global _folder
    _seen.clear()
    _folder = None if folder is None else Path(folder)
    if _folder is not None:
        shutil.rmtree(_folder, ignore_errors=True)
        try:
            _folder.mkdir(mode=0o700, parents=True)
        except OSError:  # only sharing is lost: each process keeps its own memory
            _folder = None


def refresh() -> int:
    """Read the entries other processes wrote to the folder since the last refresh into this
    process's memory; returns how many. Unreadable or damaged files are skipped (recomputed)."""
    if _folder is None:
        return 0
    count = 0
    try:
        names = [e.name for e in os.scandir(_folder) if e.name.endswith(ENTRY_SUFFIX)]
    except OSError:
        return 0
    for file_name in names:
        if file_name in _seen:
            continue
        _seen.add(file_name)
        try:
            key, value = _decoded(wire.decode(wire.loads((_folder / file_name).read_bytes())))
        except (OSError, ValueError, TypeError, IndexError):
            continue
        if file_name == _file_name(key) and key not in _memory:
            _memory[key] = value
            count += 1
    stats.loaded += count
    return count


def next_run() -> None:
    """A new run of the graders in this process (a batch's harness child grades several
    learners in turn): each impure function is named again in the next learner's grader.log.
    The stored values are kept: they do not depend on the learner."""
    _warned.clear()


def clear() -> None:
    """Forget every stored value and reset the counters (tests); the folder is kept."""
    _memory.clear()
    _seen.clear()
    _warned.clear()
    stats.__init__()


# -- keys ---------------------------------------------------------------------------------------


def _key(name: str, args: tuple, kwargs: dict) -> str:
    digest = hashlib.sha256(name.encode())
    _feed(digest, args)
    _feed(digest, dict(sorted(kwargs.items())))
    return f"{name}:{digest.hexdigest()}"


def _feed(digest: Any, value: Any) -> None:
    """Add a tagged, unambiguous encoding of `value` to the digest; _Uncacheable otherwise."""
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        digest.update(f"<{type(value).__name__}:{value!r}>".encode())
    elif isinstance(value, torch.Tensor):
        data = value.detach() if value.requires_grad else value
        if data.is_conj() or data.is_neg():
            data = data.resolve_conj().resolve_neg()
        if data.dtype == torch.bfloat16:  # numpy has no bfloat16: its bits, as int16
            data = data.view(torch.int16)
        try:  # refused for tensors that are not plain CPU ones (sparse, quantized, meta, GPU)
            array = data.numpy()
        except (TypeError, RuntimeError) as error:
            raise _Uncacheable from error
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        head = f"<tensor:{value.dtype}:{tuple(value.shape)}:{value.requires_grad}:{array.nbytes}>"
        digest.update(head.encode())
        digest.update(array)
    elif isinstance(value, (np.ndarray, np.generic)):
        array = np.ascontiguousarray(value)
        if array.dtype.hasobject:
            raise _Uncacheable
        kind = "ndarray" if isinstance(value, np.ndarray) else "npscalar"
        digest.update(f"<{kind}:{array.dtype.str}:{array.shape}:{array.nbytes}>".encode())
        digest.update(array)
    elif isinstance(value, torch.dtype):
        digest.update(f"<dtype:{value}>".encode())
    elif isinstance(value, (tuple, list)):
        digest.update(f"<{type(value).__name__}:{len(value)}>".encode())
        for item in value:
            _feed(digest, item)
    elif isinstance(value, Mapping):
        digest.update(f"<mapping:{len(value)}>".encode())
        for k, v in value.items():
            _feed(digest, k)
            _feed(digest, v)
    else:
        raise _Uncacheable


def _file_name(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest() + ENTRY_SUFFIX


# -- values -------------------------------------------------------------------------------------


def _copy(value: Any) -> Any:
    """An independent copy of a result made of values; _Uncacheable for anything else."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, torch.dtype)):
        return value
    if isinstance(value, torch.Tensor):
        if value.requires_grad or type(value) is not torch.Tensor:
            raise _Uncacheable  # autograd history or a subclass (nn.Parameter): not a value
        return value.clone()
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise _Uncacheable
        return value.copy()
    if isinstance(value, np.generic):
        return value.copy()
    if isinstance(value, AnyOf):
        return AnyOf(*(_copy(item) for item in value.arrays))
    if type(value) in (tuple, list):
        return type(value)(_copy(item) for item in value)
    if type(value) is dict and all(isinstance(k, (str, int)) for k in value):
        return {k: _copy(v) for k, v in value.items()}
    raise _Uncacheable


def _encoded(value: Any) -> Any:
    """A stored value with each AnyOf as {ANY_OF: [items]}, ready for the wire codec."""
    if isinstance(value, AnyOf):
        return {ANY_OF: [_encoded(item) for item in value.arrays]}
    if type(value) in (tuple, list):
        return type(value)(_encoded(item) for item in value)
    if type(value) is dict:
        return {k: _encoded(v) for k, v in value.items()}
    return value


def _decoded_value(value: Any) -> Any:
    if type(value) is dict:
        if len(value) == 1 and ANY_OF in value:
            return AnyOf(*(_decoded_value(item) for item in value[ANY_OF]))
        return {k: _decoded_value(v) for k, v in value.items()}
    if type(value) in (tuple, list):
        return type(value)(_decoded_value(item) for item in value)
    return value


def _decoded(entry: Any) -> tuple[str, Any]:
    key, value = entry
    if not isinstance(key, str):
        raise TypeError("an entry's key must be a str")
    return key, _decoded_value(value)


def _write(key: str, value: Any) -> None:
    """Write one entry to the folder, atomically; a failure only means no sharing."""
    if _folder is None:
        return
    name = _file_name(key)
    _seen.add(name)
    try:
        frame = wire.dumps(wire.encode((key, _encoded(value))))
        atomic_write_bytes(_folder / name, frame)  # its temporary ".NAME.*" is never read
    except (OSError, wire.WireError):
        return
    stats.written += 1


# -- the purity guard ---------------------------------------------------------------------------


def _random_states() -> tuple:
    state = np.random.get_state()
    return (
        torch.random.default_generator.get_state(),
        state[0],
        state[1].tobytes(),
        *state[2:],
        random.getstate(),
    )


def _same_states(before: tuple, after: tuple) -> bool:
    return torch.equal(before[0], after[0]) and before[1:] == after[1:]
