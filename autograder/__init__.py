"""t101-autograder: grade learner code in an isolated worker and explain every lost point.

The public surface is small; everything else lives in its own module (config, feedback,
results, pytest_plugin, reports, runtime, commands).
"""

from importlib.metadata import PackageNotFoundError, version

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
