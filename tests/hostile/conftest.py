"""The hostile corpus: `pytest -m "not hostile"` leaves out its slow end-to-end grading runs."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "hostile: grades hostile submissions end to end (slow: several minutes)"
    )
    config.addinivalue_line(
        "markers", "evidence(text): the static check's evidence of a reach into the worker"
    )
