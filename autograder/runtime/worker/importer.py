"""Lazy, per-module import of the learner's package inside the worker.

The package is loaded from the private root only. If its ``__init__.py`` raises (or the harness
asks to skip it after it hung), a bare package module stands in, so every submodule can still be
imported on its own: a syntax error in one module costs only that module.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

from autograder.runtime.shared import messages
from autograder.runtime.shared.messages import compose
from autograder.runtime.worker.describe import shown_path


class ImportFailure(Exception):
    """A module could not be imported; ``error`` holds the LearnerError fields."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("feedback", error.get("message", "")))
        self.error = error


class LearnerImporter:
    """Imports ``package.<name>`` from ``root`` on first use."""

    def __init__(
        self, package: str, root: str, *, shown_dir: str, refused: dict[str, str], describe: Any
    ) -> None:
        self.package = package
        self.root = root
        self.shown_dir = shown_dir.rstrip("/")
        self.refused = refused
        self.describe = describe  # (exc, phase) -> error fields
        self.init_error: dict[str, Any] | None = None
        self.package_missing = False

    def import_package(self, *, skip_init: bool = False) -> types.ModuleType:
        """The package module; runs ``__init__.py`` unless skipped (a bare package if it fails)."""
        existing = sys.modules.get(self.package)
        if existing is not None:
            return existing
        spec = importlib.machinery.PathFinder.find_spec(self.package, [self.root])
        if spec is None or spec.submodule_search_locations is None or spec.loader is None:
            self.package_missing = spec is None
            return self._bare_package()
        if skip_init:
            return self._bare_package()
        module = importlib.util.module_from_spec(spec)
        sys.modules[self.package] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:
            sys.modules.pop(self.package, None)
            self.init_error = self.describe(exc, "import")
            return self._bare_package()
        return module

    def _bare_package(self) -> types.ModuleType:
        path = str(Path(self.root) / self.package)
        spec = importlib.machinery.ModuleSpec(self.package, None, is_package=True)
        spec.submodule_search_locations = [path]
        module = importlib.util.module_from_spec(spec)
        module.__path__ = [path]
        sys.modules[self.package] = module
        return module

    def file_of(self, name: str) -> str:
        """``softmax`` -> ``t101/softmax.py`` (relative to the private root)."""
        return f"{self.package}/{name.replace('.', '/')}.py"

    def shown_file_of(self, name: str) -> str:
        """``softmax`` -> ``assignments/t101/softmax.py``: the file as the learner's repository
        names it, for sentences."""
        return shown_path(self.file_of(name), self.shown_dir)

    def import_module(self, name: str) -> types.ModuleType:
        """``t101.<name>``; raises ImportFailure with the learner's sentence when it cannot."""
        full = f"{self.package}.{name}"
        module = sys.modules.get(full)
        if module is not None:
            return module
        self.import_package()
        try:
            spec = importlib.util.find_spec(full)
        except BaseException as exc:  # a parent subpackage failed to import
            raise ImportFailure(self._describe_import(exc, name)) from None
        if spec is None:
            raise ImportFailure(self._missing(name))
        try:
            return importlib.import_module(full)
        except BaseException as exc:
            raise ImportFailure(self._describe_import(exc, name)) from None

    def _describe_import(self, exc: BaseException, name: str) -> dict[str, Any]:
        if isinstance(exc, SyntaxError) and not exc.filename:  # e.g. null bytes (UTF-16 source)
            exc.filename = str(Path(self.root) / self.file_of(name))
            exc.lineno = exc.lineno or _first_null_line(exc.filename)
        error = self.describe(exc, "import")
        if "feedback" not in error:
            error["feedback"] = compose(error, f"Importing {self.shown_file_of(name)}")
        return error

    def _missing(self, name: str) -> dict[str, Any]:
        relative = name.replace(".", "/") + ".py"
        file = self.shown_file_of(name)
        reason = self.refused.get(relative)
        if reason is not None:
            feedback = messages.REFUSED_MODULE.format(file=file, reason=reason)
        else:
            feedback = messages.MISSING_MODULE.format(file=file)
        return _prepared(ModuleNotFoundError, f"No module named '{self.package}.{name}'", feedback)

    def resolve(self, module: types.ModuleType, name: str, qualname: str) -> Any:
        """``module.<qualname>``; a missing top-level name gives the learner's sentence."""
        head, *rest = qualname.split(".")
        if not hasattr(module, head):
            feedback = messages.MISSING_NAME.format(file=self.shown_file_of(name), name=head)
            message = f"module '{module.__name__}' has no attribute '{head}'"
            raise ImportFailure(_prepared(AttributeError, message, feedback))
        obj = getattr(module, head)
        for part in rest:
            obj = getattr(obj, part)
        return obj


def _first_null_line(path: str) -> int:
    """The first line of a file holding a NUL byte (1 if none or unreadable)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return 1
    return data[: data.find(b"\0")].count(b"\n") + 1 if b"\0" in data else 1


def _prepared(exc_type: type[BaseException], message: str, feedback: str) -> dict[str, Any]:
    """Error fields for a failure the importer describes itself (no learner frame involved)."""
    return {
        "kind": "import_error",
        "exc_type": exc_type.__name__,
        "exc_mro": [cls.__name__ for cls in exc_type.__mro__],
        "message": message,
        "location": "",
        "traceback": "",
        "feedback": feedback,
    }
