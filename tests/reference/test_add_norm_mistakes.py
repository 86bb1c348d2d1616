"""support.add_norm_mistakes recognises an Add & Norm whose dropout stays on in eval mode, and
nothing else, by trying every keep pattern of each token in the trusted process."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from tests.graders.support.add_norm_mistakes import (
    DROPOUT_IN_EVAL,
    dropout_in_eval,
    dropout_patterns,
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
