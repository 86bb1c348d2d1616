"""support.add_norm_mistakes recognises an Add & Norm whose dropout stays on in eval mode, and
nothing else, by trying every keep pattern of each token in the trusted process; and a
LayerNorm of the learner's own with the unbiased deviation, eps added to it and eps fixed at
1e-6 (hkproj/pytorch-transformer's), named with all three."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.feedback import GradingFailure, expect_close
from tests.graders.support.add_norm_mistakes import (
    DROPOUT_IN_EVAL,
    EPS_IGNORED,
    EPS_OUTSIDE_SQRT,
    UNBIASED_VARIANCE,
    dropout_in_eval,
    dropout_patterns,
    expected_and_mistakes,
)
from tests.graders.support.catalogue import mistake
from tests.graders.support.inputs import tensor

D = 8


def _setup():
    rng = np.random.default_rng(3)
    state = {"norm.weight": 1 + 0.2 * tensor(rng, D), "norm.bias": 0.1 * tensor(rng, D)}
    return state, tensor(rng, 2, 4, D), tensor(rng, 2, 4, D)


def _norm(state, z):
    return F.layer_norm(z, (D,), state["norm.weight"], state["norm.bias"], 1e-5)


def test_recognises_dropout_left_on():
    state, x, s = _setup()
    torch.manual_seed(0)
    got = _norm(state, x + F.dropout(s, 0.5, training=True))
    found = dropout_in_eval(dropout_patterns(got, state, x, s, p=0.5))
    assert list(found) == [mistake(DROPOUT_IN_EVAL)]
    torch.testing.assert_close(found[mistake(DROPOUT_IN_EVAL)], got.double(), atol=1e-5, rtol=0)


def test_other_wrong_outputs_are_not_dropout():
    state, x, s = _setup()
    assert dropout_in_eval(dropout_patterns(_norm(state, x + 0.5 * s), state, x, s, p=0.5)) == {}
    assert dropout_in_eval(dropout_patterns(x + s, state, x, s, p=0.5)) == {}


def test_unbiased_deviation_plus_a_fixed_eps_names_all_three():
    state, x, s = _setup()
    z = x + s
    own = (z - z.mean(-1, keepdim=True)) / (z.std(-1, keepdim=True) + 1e-6)
    got = own * state["norm.weight"] + state["norm.bias"]
    expected, mistakes = expected_and_mistakes(state, x, s, eps=0.5, got=got)
    three = " ".join(mistake(i) for i in (UNBIASED_VARIANCE, EPS_OUTSIDE_SQRT, EPS_IGNORED))
    with pytest.raises(GradingFailure) as failure:
        expect_close(got, expected, what="AddNorm(8, eps=0.5)(x, s)", atol=1e-5, mistakes=mistakes)
    assert three in str(failure.value)
