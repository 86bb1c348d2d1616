"""The [limits] table of course.toml, and the check of a --timeout given on a command line.

Both follow one rule: a time limit is a positive, finite number of seconds of at most
MAX_SECONDS; a memory or size limit a positive whole number of at most MAX_MB.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator

from autograder.config.sections import Section

BAD_TIMEOUT = "--timeout must be a positive number of seconds, at most {most:,}; got {value}."


class OptionError(ValueError):
    """An option's value cannot be used; the message is one sentence saying why."""


def check_timeout(test_timeout: float | None) -> None:
    """OptionError unless --timeout is absent or a positive, finite number of seconds of at
    most MAX_SECONDS, as course.toml's test_timeout (inf failed every test as the grader's
    own fault)."""
    if test_timeout is None:
        return
    if not (math.isfinite(test_timeout) and 0 < test_timeout <= MAX_SECONDS):
        raise OptionError(BAD_TIMEOUT.format(value=test_timeout, most=MAX_SECONDS))


MAX_SECONDS = 3600  # the longest time limit course.toml may set
MAX_MB = 2**20  # 1 TiB in MiB (1 GiB in KiB): the largest memory or size limit
DEFAULT_VALUE_MB = 256  # runtime.wire.DEFAULT_MAX_BYTES, in MiB (config does not import wire)


class LimitsSection(Section):
    """The [limits] table: seconds, MiB, KiB and counts, each positive and bounded. Strict:
    true, "16" or 16.0 where a whole number belongs is refused (pydantic's lax mode read true
    as 1), as is inf; a timeout of more than an hour or a memory of more than 1 TiB is a typo."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    test_timeout: float = Field(default=10.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    import_timeout: float = Field(default=20.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    startup_timeout: float = Field(default=60.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    #: wall seconds of all of one submission's learner code (runtime/harness/budget.py)
    submission_timeout: float = Field(default=120.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    memory_mb: int = Field(default=4096, gt=0, le=MAX_MB)
    output_kb: int = Field(default=16, gt=0, le=MAX_MB)
    hang_strikes: int = Field(default=2, gt=0, le=100)
    #: MiB: everything the worker may write (a size-capped private root)
    disk_mb: int = Field(default=256, gt=0, le=MAX_MB)
    #: MiB: the largest value (a result, an argument) that crosses between graders and learner
    #: code at once; what the harness holds of learner outputs is a few times this per test
    value_mb: int = Field(default=DEFAULT_VALUE_MB, gt=0, le=MAX_MB)

    @model_validator(mode="before")
    @classmethod
    def _default_value_within_memory(cls, data: Any) -> Any:
        """value_mb not given: 256, or memory_mb when that is smaller (H45: memory_mb = 128
        left a 256 MiB default no value could reach)."""
        if isinstance(data, dict) and "value_mb" not in data:
            memory = data.get("memory_mb")
            if type(memory) is int and 0 < memory < DEFAULT_VALUE_MB:
                return {**data, "value_mb": memory}
        return data

    @field_validator("value_mb")
    @classmethod
    def _within_memory(cls, value: int, info: Any) -> int:
        memory = info.data.get("memory_mb")
        if memory is not None and value > memory:
            raise ValueError(
                f"at most limits.memory_mb ({memory}): learner code cannot build a value "
                "larger than its whole memory"
            )
        return value
