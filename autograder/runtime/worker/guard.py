"""Recorders for forbidden APIs, installed in the worker before any learner code is imported.

The second layer behind the harness's static check, for calls no source shows. Two recorders
feed one Guard: a wrapper on each API's module or class attribute, and, while learner code runs
(``learner_code``), a torch function mode (``torch.overrides.TorchFunctionMode``, public) that
sees every torch call however it was reached.

- A record is ``(api, path relative to the package folder, line)`` of the innermost learner
  frame, or of ``home`` (line 0) when learner code runs without one; the harness charges it to
  the component whose test made it.
- A call made by another forbidden API's code (``F.multi_head_attention_forward`` inside
  ``nn.MultiheadAttention.forward``), no learner frame between, carries the outermost such API:
  ``(api, file, line, within)``, evidence only: the harness leaves it out of the report when it
  reports ``within`` in the same component (results/points_rule.py), never sparing one.
- ``exempting(objects, codes)``: a call reached through a stand-in the harness installed on the
  request's object, before any learner frame, is not recorded.
- ``intact()`` says after each request whether a recorder was undone (the harness then fails
  the test as tampering). The Guard's state lives in closures; a wrapper has no ``__wrapped__``.

Design: docs/internals/runtime.md#forbidden-api-recorders.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from autograder.runtime.shared.forbidden_names import ForbiddenNames

#: (api, file, line), or (api, file, line, within) for a call made inside another forbidden API
Record = tuple[str, str, int] | tuple[str, str, int, str]

_MAX_KNOWN = 20_000  # torch functions whose verdict api_of keeps
#: The file of a record made by learner code that hid its own file name.
UNKNOWN_FILE = "<code with no file in the package>"
MODE_OFF = "the recorder of torch calls was switched off"
REPLACED = "{api} was replaced"


class Guard:
    """The records of one worker, and what it wrapped (see the module docstring)."""

    def __init__(self, package_dir: str, names: ForbiddenNames) -> None:
        self.package_dir = os.path.realpath(package_dir) + os.sep
        self.names = names
        self.records: list[Record] = []
        self.exempt_ids: frozenset[int] = frozenset()
        self.exempt_codes: frozenset[Any] = frozenset()
        #: while the worker runs learner code: the file of the object the request is about
        self.home: str | None = None
        #: (api, owner, attribute, the recorder put there)
        self.wrapped: list[tuple[str, Any, str, Callable]] = []
        #: the code objects of the forbidden APIs' own Python code (their originals), by API
        self.codes: dict[Any, str] = {}
        self.broken = ""  # what learner code undid, once seen
        self._mode = _function_mode(self)
        self._apis: dict[Any, str | None] = {}
        self.probed = False

    def drain(self) -> list[Record]:
        """The records observed since the last drain, without duplicates, in call order."""
        seen = list(dict.fromkeys(self.records))
        self.records.clear()
        return seen

    @contextmanager
    def exempting(self, objects: Collection[Any], codes: Collection[Any]) -> Iterator[None]:
        """Within the block, calls made through ``objects`` (stand-ins) running one of
        ``codes`` (their forward functions' code objects) are not recorded."""
        saved = self.exempt_ids, self.exempt_codes
        if objects:
            self.exempt_ids = frozenset(id(obj) for obj in objects)
            self.exempt_codes = frozenset(codes)
        try:
            yield
        finally:
            self.exempt_ids, self.exempt_codes = saved

    @contextmanager
    def learner_code(self, home: str | None) -> Iterator[None]:
        """Within the block the worker runs learner code for a request about an object of
        ``home`` (its file relative to the package dir, None when unknown): torch calls are
        recorded through the function mode, and a forbidden call with no learner frame on the
        stack is recorded against ``home``."""
        saved = self.home
        self.home = home or UNKNOWN_FILE
        entered = self._enter_mode()
        try:
            yield
        finally:
            self.home = saved
            if entered:
                self._leave_mode()

    def intact(self) -> str:
        """ "" while every wrapper is in place and the function mode was on; else what learner
        code changed (once changed, always said: the worker is not to be trusted again)."""
        if not self.broken:
            for api, owner, attribute, recorder in self.wrapped:
                if _own_attribute(owner, attribute) is not recorder:
                    self.broken = REPLACED.format(api=api)
                    break
        return self.broken

    def record(self, api: str, frame: Any) -> None:
        """Record ``api`` against the innermost learner frame at or outside ``frame``, with the
        outermost forbidden API whose own code runs between the two (``within``)."""
        within = ""
        while frame is not None:
            code = frame.f_code
            if code in self.exempt_codes and id(frame.f_locals.get("self")) in self.exempt_ids:
                return  # called through a stand-in the harness installed
            filename = code.co_filename
            if filename.startswith(self.package_dir):
                relative = filename[len(self.package_dir) :].replace(os.sep, "/")
                self._add(api, relative, frame.f_lineno, within)
                return
            within = self.codes.get(code, within)
            frame = frame.f_back
        if self.home is not None:  # learner code that names another file as its own
            self._add(api, self.home, 0, within)

    def _add(self, api: str, file: str, line: int, within: str) -> None:
        self.records.append((api, file, line, within) if within else (api, file, line))

    def api_of(self, func: Any) -> str | None:
        """The forbidden API a torch function is (by its name, overload left out), or None."""
        try:
            return self._apis[func]
        except (KeyError, TypeError):
            pass
        name = str(getattr(func, "__name__", "")).split(".", 1)[0]
        api = self.names.in_path(f"torch.{name}") if name else None
        if len(self._apis) < _MAX_KNOWN:
            try:
                self._apis[func] = api
            except TypeError:
                pass
        return api

    def _enter_mode(self) -> bool:
        if self._mode is None:
            return False
        try:
            self._mode.__enter__()
        except Exception:
            return False
        self.probed = False
        return True

    def _leave_mode(self) -> None:
        """Check that the mode still sees torch calls (a probe call it must record), then leave
        it; learner code that popped it or switched function modes off is remembered."""
        import torch

        try:
            torch.empty(0)
        except Exception:
            pass
        if not self.probed and not self.broken:
            self.broken = MODE_OFF
        try:
            self._mode.__exit__(None, None, None)
        except Exception:
            self.broken = self.broken or MODE_OFF


_current: Guard | None = None


def install(apis: Sequence[str], package_dir: str) -> list[str]:
    """Make the worker's Guard and wrap every API in ``apis`` that resolves; return the names
    that were wrapped. The Guard is ``current()``."""
    global _current
    guard = Guard(package_dir, ForbiddenNames.from_apis(tuple(apis)))
    installed = []
    for api in apis:
        resolved = _resolve(api)
        if resolved is None:
            continue
        owner, attr, target = resolved
        for code in _own_codes(target):
            guard.codes.setdefault(code, api)  # code listed twice: named as listed first
        if inspect.isclass(target):
            owner, attr, target = target, "__init__", target.__dict__.get("__init__")
            if target is None:
                continue
        if not callable(target) or getattr(target, "_autograder_guarded", False):
            continue
        recorder = _recording(api, target, guard.record)
        try:
            setattr(owner, attr, recorder)
        except (AttributeError, TypeError):
            continue
        guard.wrapped.append((api, owner, attr, recorder))
        installed.append(api)
    if guard._mode is not None:
        _watch_switches(guard)
    _current = guard
    return installed


#: torch's switches that turn function modes off, or take one off the stack: called by learner
#: code (its own frame the caller), they make the worker say it was tampered with.
SWITCHES = (
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "_pop_torch_function_stack",
    "_push_on_torch_function_stack",
    "_set_torch_function_mode",
)


def _watch_switches(guard: Guard) -> None:
    import torch

    for name in SWITCHES:
        original = getattr(torch._C, name, None)
        if original is None:
            continue

        def switch(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename
            if caller.startswith(guard.package_dir):
                guard.broken = guard.broken or MODE_OFF
            return _original(*args, **kwargs)

        setattr(torch._C, name, switch)
        guard.wrapped.append((f"torch._C.{name}", torch._C, name, switch))


def current() -> Guard:
    """The Guard of the last install (the worker keeps its own reference to it)."""
    if _current is None:
        raise RuntimeError("guard.install has not run in this process")
    return _current


def drain() -> list[Record]:
    """current().drain()."""
    return current().drain() if _current is not None else []


def exempting(objects: Collection[Any], codes: Collection[Any]):
    """current().exempting(objects, codes)."""
    return current().exempting(objects, codes)


def learner_code(home: str | None):
    """current().learner_code(home)."""
    return current().learner_code(home)


def _resolve(api: str) -> tuple[Any, str, Any] | None:
    parts = api.split(".")
    if len(parts) < 2:
        return None
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except Exception:
            continue
        try:
            for name in parts[split:-1]:
                obj = getattr(obj, name)
            return obj, parts[-1], getattr(obj, parts[-1])
        except AttributeError:
            return None
    return None


def _own_codes(target: Any) -> Iterator[Any]:
    """The code objects of ``target``'s own Python code: a function's, or every function,
    static or class method and property defined in a class's own namespace; with the code of
    functions and lambdas defined inside them. Builtins (C functions) have none."""
    if inspect.isclass(target):
        members = list(vars(target).values())
    else:
        members = [target]
    pending = []
    for member in members:
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        parts = (member.fget, member.fset, member.fdel) if isinstance(member, property) else ()
        for part in (member, *parts):
            code = getattr(part, "__code__", None) if inspect.isfunction(part) else None
            if code is not None:
                pending.append(code)
    while pending:
        code = pending.pop()
        yield code
        pending.extend(c for c in code.co_consts if inspect.iscode(c))


def _recording(api: str, original: Callable, record: Callable[[str, Any], None]) -> Callable:
    """A wrapper that records ``api`` and calls ``original``; it names itself as the original
    does, but keeps no ``__wrapped__``: the original is reachable only through its closure."""

    def recorder(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1)
        if not _recorded_outside(caller):
            record(api, caller)
        return original(*args, **kwargs)

    functools.update_wrapper(recorder, original)
    del recorder.__wrapped__
    recorder._autograder_guarded = True  # type: ignore[attr-defined]
    return recorder


def _recorded_outside(caller: Any) -> bool:
    """The function mode is calling this wrapper for another wrapper's original (one function
    listed under two names, as ``F.scaled_dot_product_attention`` is ``torch._C._nn``'s): the
    outer wrapper recorded the call under the name the course listed first."""
    outer = caller.f_back
    return caller.f_code in _MODE_CODES and outer is not None and outer.f_code is _RECORDER_CODE


def _through_a_wrapper(func: Any, caller: Any) -> bool:
    """The call is a wrapped API (or the original a wrapper is calling): the wrapper records
    it under the name the course gave."""
    return getattr(func, "_autograder_guarded", False) is True or (
        caller is not None and caller.f_code is _RECORDER_CODE
    )


def _own_attribute(owner: Any, attribute: str) -> Any:
    """What ``owner`` holds under ``attribute`` itself (no descriptor or __getattr__ runs)."""
    try:
        if isinstance(owner, type):
            namespace = type.__dict__["__dict__"].__get__(owner)
        else:
            namespace = object.__getattribute__(owner, "__dict__")
        return namespace[attribute]
    except Exception:
        return None


def _function_mode(guard: Guard) -> Any:
    """A torch function mode that records the forbidden torch calls it sees (None when no
    forbidden API is torch's, or without torch: a fake library in the framework's own tests).
    It costs a Python call per torch call of learner code, so it is on only when needed."""
    if "torch" not in sys.modules or "torch" not in guard.names.roots:
        return None
    import torch
    from torch.overrides import TorchFunctionMode

    probe = torch.empty

    class ForbiddenCallRecorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            # Every torch call of learner code passes here: the common case is one dict lookup.
            api = guard.api_of(func)
            if api is not None and not _through_a_wrapper(func, sys._getframe(1)):
                guard.record(api, sys._getframe(1))
            elif func is probe:
                guard.probed = True
            if kwargs:
                return func(*args, **kwargs)
            return func(*args)

    _MODE_CODES.add(ForbiddenCallRecorder.__torch_function__.__code__)
    return ForbiddenCallRecorder()


#: The code of the function mode's __torch_function__ (see _recorded_outside).
_MODE_CODES: set[Any] = set()


#: The code every wrapper runs (one closure, one code object).
_RECORDER_CODE = _recording("", print, lambda api, frame: None).__code__
