"""Stand-ins: known-good parts a course supplies in place of a learner's.

Graders set stand-ins in place of a learner's parts so that one mistake is charged once. The
course writes them in one Python file (course.toml ``[course] standins``; it never ships to
learners) defining ``KINDS`` (kind -> (factory, its settings' types)) and ``FUNCTIONS`` (name ->
maker of a stand-in for the learner's function, or None). ``load`` runs the file's text: in the
harness to build its twins, and in a worker at the first request that sets a stand-in (never
before: learner code in a worker never handed one finds none). It may import the standard
library, numpy and torch only.

Calls through a stand-in's ``forward`` (or that of any nn.Module class the file defines) are
not recorded as the learner's use of a forbidden API (worker/guard.py).

Design: docs/internals/runtime.md#stand-ins-in-the-worker; the file's format:
docs/author/standins.md.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

NO_KIND = "No stand-in kind is called {kind!r}; expected one of: {names}."
NO_STANDINS = (
    "No stand-in kind is called {kind!r}: this course supplies no stand-ins (course.toml "
    "[course] standins names none)."
)
BAD_CONFIG = "The stand-in {kind!r} expects the settings {expected}; got {got}."
BAD_SETTING = "The stand-in {kind!r} setting {name} must be {type}; got {value!r}."
BAD_FILE = "The stand-ins file {name} is not usable: {detail}."
SETTING_TYPES = {
    "int": "a positive int",
    "float": "a positive float",
    "probability": "a float in [0, 1)",
    "bool": "a bool",
}


class StandInError(ValueError):
    """A stand-in cannot be built as asked; the message says what was expected and what came."""


@dataclass
class StandInRegistry:
    """The stand-ins one course supplies: module kinds and function makers (empty: none)."""

    kinds: Mapping[str, tuple[Callable[..., Any], Mapping[str, str]]] = field(default_factory=dict)
    functions: Mapping[str, Callable[[Callable[..., Any]], Any]] = field(default_factory=dict)
    #: The `forward` code objects of the file's nn.Module classes (worker/guard.exempting).
    forward_codes: frozenset = frozenset()

    def build(self, kind: str, config: Mapping[str, Any], state: Mapping | None = None) -> Any:
        """The stand-in `kind` with `config`, in eval() mode; with `state`, its weights (strict).
        StandInError for an unknown kind or wrong settings; torch's RuntimeError when the state
        dict does not fit."""
        if not isinstance(kind, str) or kind not in self.kinds:
            raise StandInError(self._no_kind(kind, self.kinds))
        factory, settings = self.kinds[kind]
        if not isinstance(config, Mapping) or set(config) != set(settings):
            got = sorted(map(str, config)) if isinstance(config, Mapping) else type(config).__name__
            raise StandInError(BAD_CONFIG.format(kind=kind, expected=sorted(settings), got=got))
        args = {
            name: _setting(kind, name, wanted, config[name]) for name, wanted in settings.items()
        }
        module = factory(**args)
        if state is not None:
            module.load_state_dict(dict(state), strict=True)
        return module.eval()

    def function(self, kind: str, own: Callable[..., Any]) -> Callable[..., Any] | None:
        """The function stand-in `kind` for the learner's function `own`; None when it cannot
        stand in for it. StandInError for an unknown kind."""
        if not isinstance(kind, str) or kind not in self.functions:
            raise StandInError(self._no_kind(kind, self.functions))
        return self.functions[kind](own)

    def _no_kind(self, kind: object, table: Mapping) -> str:
        if not self.kinds and not self.functions:
            return NO_STANDINS.format(kind=kind)
        return NO_KIND.format(kind=kind, names=", ".join(table))


def load(
    source: str, name: str = "course_standins", builtins: Mapping | None = None
) -> StandInRegistry:
    """The registry a stand-ins file's text defines (run as a module of its own, `name`, with
    `builtins` when given). StandInError (BAD_FILE) when its tables are missing or malformed."""
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    if builtins is not None:
        module.__dict__["__builtins__"] = dict(builtins)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 (the course's own file)
    kinds, functions = getattr(module, "KINDS", {}), getattr(module, "FUNCTIONS", {})
    if not isinstance(kinds, Mapping) or not isinstance(functions, Mapping):
        raise StandInError(BAD_FILE.format(name=name, detail="KINDS and FUNCTIONS must be dicts"))
    for kind, entry in kinds.items():
        if (
            not isinstance(entry, tuple)
            or len(entry) != 2
            or not callable(entry[0])
            or not all(t in SETTING_TYPES for t in dict(entry[1]).values())
        ):
            types_ = sorted(SETTING_TYPES)
            detail = f"KINDS[{kind!r}] must be (factory, {{setting: one of {types_}}})"
            raise StandInError(BAD_FILE.format(name=name, detail=detail))
    return StandInRegistry(dict(kinds), dict(functions), _forward_codes(module))


def _forward_codes(module: types.ModuleType) -> frozenset:
    codes = set()
    for value in vars(module).values():
        forward = getattr(value, "forward", None) if isinstance(value, type) else None
        code = getattr(forward, "__code__", None)
        # the file's own code only (loaded after learner code ran, a class could be the learner's)
        own = getattr(code, "co_filename", None) == module.__file__
        if own and getattr(value, "__module__", None) == module.__name__:
            codes.add(code)
    return frozenset(codes)


def _setting(kind: str, name: str, wanted: str, value: Any) -> Any:
    integer = isinstance(value, int) and not isinstance(value, bool)
    if wanted in ("float", "probability") and integer:
        value = float(value)
    checks = {
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
        "float": lambda v: isinstance(v, float) and math.isfinite(v) and v > 0,
        "probability": lambda v: isinstance(v, float) and 0.0 <= v < 1.0,
        "bool": lambda v: isinstance(v, bool),
    }
    if not checks[wanted](value):
        raise StandInError(
            BAD_SETTING.format(kind=kind, name=name, type=SETTING_TYPES[wanted], value=value)
        )
    return value
