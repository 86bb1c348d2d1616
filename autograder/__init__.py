"""t101-autograder: grade learner code in an isolated worker and explain every lost point.

The public surface is small; everything else lives in its own module (config, feedback,
results, pytest_plugin, reports, runtime, commands).
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autograder.config import CourseConfig, CourseConfigError, find_course_file, load_course
    from autograder.feedback import (
        GradingFailure,
        expect,
        expect_close,
        expect_dtype,
        expect_finite,
        expect_raises,
        expect_shape,
        expect_type,
        is_hidden,
    )
    from autograder.results import ComponentResult, GradeResult, TestResult

try:
    __version__ = version("t101-autograder")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"

#: Where each public name lives. They are imported when first used (PEP 562): importing the
#: package for a submodule (the command line, the worker fork server) must not pay for
#: pydantic and numpy (about 0.4 s) before it can start the processes a batch waits for.
_PUBLIC = {
    **dict.fromkeys(
        ("CourseConfig", "CourseConfigError", "find_course_file", "load_course"),
        "autograder.config",
    ),
    **dict.fromkeys(
        (
            "GradingFailure",
            "expect",
            "expect_close",
            "expect_dtype",
            "expect_finite",
            "expect_raises",
            "expect_shape",
            "expect_type",
            "is_hidden",
        ),
        "autograder.feedback",
    ),
    **dict.fromkeys(("ComponentResult", "GradeResult", "TestResult"), "autograder.results"),
}


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'autograder' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))


__all__ = [
    "ComponentResult",
    "CourseConfig",
    "CourseConfigError",
    "GradeResult",
    "GradingFailure",
    "TestResult",
    "__version__",
    "expect",
    "expect_close",
    "expect_dtype",
    "expect_finite",
    "expect_raises",
    "expect_shape",
    "expect_type",
    "find_course_file",
    "is_hidden",
    "load_course",
]
