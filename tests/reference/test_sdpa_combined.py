"""support.sdpa_combined: scale mistakes that coincide on a test's inputs are named together,
and a wrong scale, the softmax over the queries and an ignored mask are named together."""

from __future__ import annotations

import numpy as np

from tests.graders.support.inputs import array, key_mask
from tests.graders.support.mistakes import sdpa_mistakes
from tests.graders.support.sdpa_combined import combined_mistakes, wrong_scales

BY_S = "[attention/scale-by-key-length]"
BY_D_K = "[attention/scale-by-d-k]"
OVER_QUERIES = "[attention/softmax-over-queries]"
IGNORED = "[attention/mask-ignored]"


def columns_translated(Q, K, V):
    """A column-convention attention translated to rows literally: sqrt(S), softmax over -2."""
    kq = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])
    ex = np.exp(kq - kq.max(axis=-2, keepdims=True))
    att = ex / ex.sum(axis=-2, keepdims=True)
    return att @ V, att


def test_equal_scales_share_one_sentence():
    rng = np.random.default_rng(1)
    Q, K, V = array(rng, 3, 2), array(rng, 4, 2), array(rng, 4, 3)  # 1/d_k == 1/sqrt(S)
    scales = wrong_scales(Q, K, V)
    (both,) = [s for s in scales if BY_S in s]
    assert BY_D_K in both and scales[both] == 0.5
    assert not any(BY_S in s for s in wrong_scales(Q, array(rng, 2, 2), array(rng, 2, 3)))


def test_a_translated_column_attention_is_named_with_both_mistakes():
    rng = np.random.default_rng(2)
    Q, K, V = array(rng, 3, 4), array(rng, 5, 4), array(rng, 5, 6)
    out, weights = columns_translated(Q, K, V)
    outputs, all_weights = sdpa_mistakes(Q, K, V)
    named = [s for s, w in all_weights.items() if np.allclose(w, weights, atol=1e-10)]
    assert len(named) == 1 and BY_S in named[0] and OVER_QUERIES in named[0], named
    assert np.allclose(outputs[named[0]], out, atol=1e-10)


def test_an_ignored_mask_joins_them():
    rng = np.random.default_rng(3)
    Q, K, V = array(rng, 3, 4), array(rng, 5, 4), array(rng, 5, 2)
    mask = key_mask(rng, 3, 5)
    _, weights = columns_translated(Q, K, V)
    found = combined_mistakes(Q, K, V, mask)
    named = [s for s, (_, w) in found.items() if np.allclose(w, weights, atol=1e-10)]
    assert len(named) == 1, named
    assert all(tag in named[0] for tag in (BY_S, OVER_QUERIES, IGNORED)), named
