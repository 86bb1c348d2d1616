"""Checks of the options several commands share, with their sentences (tests reuse them)."""

from __future__ import annotations

import math
import os

from autograder.config import MAX_SECONDS

BAD_JOBS = "--jobs must be a whole number of at least 1; got {value}."
BAD_TIMEOUT = "--timeout must be a positive number of seconds, at most {most:,}; got {value}."


class OptionError(ValueError):
    """An option's value cannot be used; the message is one sentence saying why."""


def jobs_or_cores(jobs: int | None) -> int:
    """--jobs, or one per core when it is not given; OptionError when it is below 1."""
    jobs = jobs if jobs is not None else os.cpu_count() or 1
    if jobs < 1:
        raise OptionError(BAD_JOBS.format(value=jobs))
    return jobs


def check_timeout(test_timeout: float | None) -> None:
    """OptionError unless --timeout is absent or a positive, finite number of seconds of at
    most config.MAX_SECONDS, as course.toml's test_timeout (inf failed every test as the
    grader's own fault)."""
    if test_timeout is None:
        return
    if not (math.isfinite(test_timeout) and 0 < test_timeout <= MAX_SECONDS):
        raise OptionError(BAD_TIMEOUT.format(value=test_timeout, most=MAX_SECONDS))
