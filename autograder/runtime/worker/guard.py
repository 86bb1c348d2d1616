"""Recorders for forbidden APIs, installed in the worker before any learner code is imported.

A function is replaced, on its module (or class) attribute, by a wrapper; a class gets its
``__init__`` wrapped, so subclasses and ``super().__init__`` calls are seen too. When a wrapped API
runs, the recorder walks the stack to the innermost frame whose file lies inside the learner's
package and records ``(api, path relative to the package dir, line)``, e.g.
``("torch.nn.MultiheadAttention", "multi_head_attention.py", 12)``. Calls with no learner frame
on the stack (library internals, the worker itself) are not recorded. Names that do not resolve
in the installed library versions are skipped silently.

Stand-ins (standins.py) the harness put into a learner's module may wrap a forbidden API. Inside
``exempting(objects, codes)`` a call is not recorded when, walking outwards from it, a frame
running one of ``codes`` (a stand-in's forward) with ``self`` one of ``objects`` comes before
any learner frame: the learner's code called the stand-in, not the API. Only the stand-ins the
harness installed on the object a request is about are exempt, and only during that request (see
handler.RequestHandler.handle); a learner frame met first (learner code the stand-in reached)
still records.

Code can name any file as its own (``compile(source, torch.__file__, "exec")``), so a call with no
learner frame on the stack is still recorded while the worker runs learner code
(``learner_code(home)``): against ``home``, the file of the object the request is about, or
UNKNOWN_FILE; line 0. The harness charges such a record to the component under test.
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

Record = tuple[str, str, int]

_records: list[Record] = []
_package_dir = ""
_exempt_ids: frozenset[int] = frozenset()
_exempt_codes: frozenset[Any] = frozenset()
#: While the worker runs learner code: the file of the object the request is about (or
#: UNKNOWN_FILE); None while the worker runs its own code.
_learner_home: str | None = None

#: The file of a record made by learner code that hid its own file name.
UNKNOWN_FILE = "<code with no file in the package>"


def install(apis: Sequence[str], package_dir: str) -> list[str]:
    """Wrap every API in ``apis`` that resolves; return the names that were wrapped."""
    global _package_dir
    _package_dir = os.path.realpath(package_dir) + os.sep
    installed = []
    for api in apis:
        resolved = _resolve(api)
        if resolved is None:
            continue
        owner, attr, target = resolved
        if inspect.isclass(target):
            if _wrap_init(api, target):
                installed.append(api)
        elif callable(target) and not getattr(target, "_autograder_guarded", False):
            try:
                setattr(owner, attr, _recording(api, target))
            except (AttributeError, TypeError):
                continue
            installed.append(api)
    return installed


def drain() -> list[Record]:
    """The records observed since the last drain, without duplicates, in call order."""
    seen = list(dict.fromkeys(_records))
    _records.clear()
    return seen


@contextmanager
def exempting(objects: Collection[Any], codes: Collection[Any]) -> Iterator[None]:
    """Within the block, calls made through ``objects`` (stand-ins) running one of ``codes``
    (their forward functions' code objects) are not recorded."""
    global _exempt_ids, _exempt_codes
    saved = _exempt_ids, _exempt_codes
    if objects:
        _exempt_ids = frozenset(id(obj) for obj in objects)
        _exempt_codes = frozenset(codes)
    try:
        yield
    finally:
        _exempt_ids, _exempt_codes = saved


@contextmanager
def learner_code(home: str | None) -> Iterator[None]:
    """Within the block the worker runs learner code for a request about an object of ``home``
    (its file relative to the package dir, None when unknown): a forbidden call with no learner
    frame on the stack is recorded against ``home``."""
    global _learner_home
    saved = _learner_home
    _learner_home = home or UNKNOWN_FILE
    try:
        yield
    finally:
        _learner_home = saved


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


def _wrap_init(api: str, cls: type) -> bool:
    original = cls.__dict__.get("__init__")
    if original is None or getattr(original, "_autograder_guarded", False):
        return False
    try:
        cls.__init__ = _recording(api, original)
    except (AttributeError, TypeError):
        return False
    return True


def _recording(api: str, original: Callable) -> Callable:
    @functools.wraps(original)
    def recorder(*args: Any, **kwargs: Any) -> Any:
        _record(api)
        return original(*args, **kwargs)

    recorder._autograder_guarded = True  # type: ignore[attr-defined]
    return recorder


def _record(api: str) -> None:
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code in _exempt_codes and id(frame.f_locals.get("self")) in _exempt_ids:
            return  # called through a stand-in the harness installed
        filename = code.co_filename
        if filename.startswith(_package_dir):
            relative = filename[len(_package_dir) :].replace(os.sep, "/")
            _records.append((api, relative, frame.f_lineno))
            return
        frame = frame.f_back
    if _learner_home is not None:  # learner code that names another file as its own
        _records.append((api, _learner_home, 0))
