"""The resource limits of one learner session (course.toml ``[limits]``)."""

from __future__ import annotations

from dataclasses import dataclass

from autograder.runtime.shared.wire import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH


@dataclass(frozen=True)
class Limits:
    """How much time, memory and output learner code gets.

    Attributes:
        test_timeout: CPU seconds of learner code per test (summed over the test's calls), at
            most cpu_time.WALL_FACTOR times as many in wall time.
        import_timeout: seconds to import one learner module.
        startup_timeout: seconds for a worker to start (it imports numpy and torch).
        submission_timeout: wall seconds of all the learner's requests (and worker starts) of
            the session; past them, every later call fails at once.
        memory_mb: address-space limit of the worker process, in MiB.
        output_kb: learner stdout/stderr kept per test (and per call), in KiB.
        hang_strikes: after a call ran past the time limit or crashed the worker in this many
            tests, later calls to the same function fail at once instead of paying again.
        file_mb: largest file the worker may write (its captured output included), in MiB.
        disk_mb: all the worker may write, in MiB: the size of its private root (a tmpfs where
            the worker has namespaces; else the folder's size is checked after each request).
        max_wire_bytes: largest value that may cross the boundary at once.
        max_wire_depth: deepest nesting of a value that may cross the boundary.
    """

    test_timeout: float = 10.0
    import_timeout: float = 20.0
    startup_timeout: float = 60.0
    submission_timeout: float = 120.0
    memory_mb: int = 4096
    output_kb: int = 16
    hang_strikes: int = 2
    file_mb: int = 64
    disk_mb: int = 256
    max_wire_bytes: int = DEFAULT_MAX_BYTES
    max_wire_depth: int = DEFAULT_MAX_DEPTH

    def __post_init__(self) -> None:
        for name in ("test_timeout", "import_timeout", "startup_timeout", "submission_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(
                    f"Limits.{name} must be a positive number of seconds, "
                    f"got {getattr(self, name)!r}."
                )
        counts = ("memory_mb", "output_kb", "hang_strikes", "file_mb", "disk_mb")
        for name in (*counts, "max_wire_bytes", "max_wire_depth"):
            if not getattr(self, name) > 0:
                raise ValueError(
                    f"Limits.{name} must be a positive number, got {getattr(self, name)!r}."
                )
