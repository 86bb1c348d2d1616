"""support.mha_mistakes names weights laid out head-first, (h, B, L, S), alone and with the
other weights mistakes, whether or not B == h."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.feedback import Satisfies
from tests.graders.support.inputs import key_mask, mha_state, tensor
from tests.graders.support.mha_mistakes import heads_first, mha, mha_mistakes

D = 12
SLUG = "[multi_head_attention/heads-first]"


def _named(weights_mistakes, have: torch.Tensor) -> list[str]:
    """The sentences of `weights_mistakes` that `have` matches."""
    found = []
    for sentence, wrong in weights_mistakes.items():
        if isinstance(wrong, Satisfies):
            if wrong.holds(have.double().numpy()):
                found.append(sentence)
        elif wrong.shape == have.shape and torch.allclose(wrong.float(), have, atol=1e-5):
            found.append(sentence)
    return found


@pytest.mark.parametrize("batch, heads", [(2, 3), (3, 3)], ids=["B!=h", "B==h"])
def test_head_first_weights_are_named(batch, heads):
    rng = np.random.default_rng(11)
    state, x = mha_state(rng, D), tensor(rng, batch, 4, D)
    weights = mha(state, heads, x, x, x)[1]
    named = _named(mha_mistakes(state, heads, x, x, x)[1], weights.transpose(0, 1))
    assert named == [next(s for s in named if s.startswith(SLUG))], named


def test_with_blank_rows_both_are_named():
    rng = np.random.default_rng(12)
    state, x = mha_state(rng, D), tensor(rng, 3, 4, D)
    mask = torch.from_numpy(key_mask(rng, 3, 4, 4, blank_rows=1))
    weights = mha(state, 3, x, x, x, mask)[1]  # NaN rows for the fully masked query
    named = _named(mha_mistakes(state, 3, x, x, x, mask)[1], weights.transpose(0, 1))
    assert any("fully-masked-query" in s and SLUG in s for s in named), named


def test_swaps_arrays_and_properties():
    expected = torch.arange(24.0).view(2, 3, 2, 2)
    found = heads_first(
        {"other": expected + 1, "shaped": Satisfies(lambda a: a[0, 1, 0, 0] == 4)}, expected
    )
    assert torch.equal(found[next(iter(found))], expected.transpose(0, 1))
    assert torch.equal(found[f"other {next(iter(found))}"], expected.transpose(0, 1) + 1)
    swapped = found[f"shaped {next(iter(found))}"]
    assert swapped.holds(expected.transpose(0, 1).numpy())
    assert not swapped.holds(expected.numpy())
