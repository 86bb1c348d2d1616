"""The runtime's public surface: small, sorted, and complete."""

from __future__ import annotations

import autograder.runtime as runtime


def test_public_names_are_sorted_and_importable():
    assert runtime.__all__ == sorted(runtime.__all__)
    for name in runtime.__all__:
        assert getattr(runtime, name) is not None


def test_limits_default_to_the_course_defaults_and_reject_nonsense():
    limits = runtime.Limits()
    assert (limits.test_timeout, limits.import_timeout, limits.startup_timeout) == (10, 20, 60)
    assert (limits.memory_mb, limits.output_kb) == (4096, 16)
    for bad in ({"test_timeout": 0}, {"memory_mb": -1}, {"output_kb": 0}):
        try:
            runtime.Limits(**bad)
        except ValueError as error:
            assert str(error).startswith("Limits.") and "must be a positive" in str(error)
        else:
            raise AssertionError(f"Limits({bad}) was accepted")
