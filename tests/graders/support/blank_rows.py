"""Queries whose every key is masked, judged by what can be observed: the contract gives them
zero weights; a finite fill (-1e9) or an additive mask gives them a row that sums to 1. Tests
for feedback.Satisfies, on NumPy results (..., L, S). Symbols: L queries, S keys, n width."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def rows_match(expected: np.ndarray, blank: np.ndarray) -> Callable[[np.ndarray], bool]:
    """A test of a result (..., L, n): equal to `expected` on the queries that have a key,
    different on the others (a fully masked query's output not zero)."""

    def test(have: np.ndarray) -> bool:
        if have.shape != expected.shape:
            return False
        close = np.isclose(have, expected, atol=1e-8).all(axis=-1)  # (..., L)
        return bool(close[~blank].all() and not close[blank].all())

    return test


def normalised_rows(expected: np.ndarray, blank: np.ndarray) -> Callable[[np.ndarray], bool]:
    """A test of weights (..., L, S): equal to `expected` on the queries that have a key, finite
    and summing to 1 on the others (a finite fill, or an additive mask)."""

    def test(have: np.ndarray) -> bool:
        if have.shape != expected.shape:
            return False
        rows = have[blank]  # (n, S)
        normalised = np.isfinite(rows).all() and np.allclose(rows.sum(axis=-1), 1.0, atol=1e-8)
        return bool(normalised and np.allclose(have[~blank], expected[~blank], atol=1e-8))

    return test
