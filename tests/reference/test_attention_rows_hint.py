"""test_attention.rows_hint: the weights-sum test says a softmax over the queries only when the
columns sum to 1; otherwise only what each row must do (no softmax, an unnormalised one or a
NaN would fail it the same way)."""

from __future__ import annotations

import numpy as np

from tests.graders.visible.test_attention import COLUMNS_HINT, ROWS_HINT, rows_hint


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_columns_summing_to_one_are_said_as_the_query_axis():
    scores = np.random.default_rng(0).normal(size=(4, 6))
    assert rows_hint(_softmax(scores, axis=-2)) == COLUMNS_HINT


def test_weights_with_no_softmax_get_the_requirement_only():
    scores = np.random.default_rng(1).normal(size=(4, 6))
    assert rows_hint(scores) == ROWS_HINT
    assert rows_hint(np.exp(scores)) == ROWS_HINT  # unnormalised
    assert rows_hint(np.full((4, 6), np.nan)) == ROWS_HINT


def test_odd_values_give_the_requirement_not_an_error():
    assert rows_hint(np.ones(3)) == ROWS_HINT  # one axis: no columns to sum
    assert rows_hint("weights") == ROWS_HINT
    assert rows_hint(None) == ROWS_HINT
