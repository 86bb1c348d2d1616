"""Visible graders for t101/attention.py: scaled_dot_product_attention, self_attention,
cosine_similarity (NumPy) and the single-head SelfAttention module (PyTorch).

Expected values come from invariants and torch built-ins (support.mistakes.sdpa wraps
F.scaled_dot_product_attention); a result that matches a known mistake (mistakes/attention.toml,
support.mistakes.sdpa_mistakes) is named. Symbols: B batch, L queries, S keys, d_k, d_v widths.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.feedback import Lazy, expect, expect_close, expect_raises
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.compare import describe_call, expect_pair, pair_of
from tests.graders.support.inputs import (
    array,
    key_mask,
    padding_mask,
    permutation,
    tensor,
    to_numpy,
)
from tests.graders.support.mistakes import (
    NO_SHAPE_CHECK,
    attention_call_hints,
    sdpa,
    sdpa_mistakes,
    self_attention_hints,
)
from tests.graders.support.params import expect_parameters
from tests.graders.support.softmax_charge import charged_to_softmax, use_known_good_softmax

# The NumPy functions call the learner's softmax (where no stand-in replaces it); the tests of
# what does not (shape checks, cosine_similarity, the torch SelfAttention) say so: uses().
pytestmark = [pytest.mark.attention, pytest.mark.uses("softmax")]

MASK_HINT = "set masked scores to -inf before the softmax (np.where(mask, scores, -np.inf))"
BLANK_ROW_HINT = (
    "a query whose every key is masked must get all-zero weights and a zero output: the "
    "softmax of an all -inf row must give zeros, not NaN"
)
SCALE_HINT = "scores = Q @ K^T / sqrt(d_k), with d_k = Q.shape[-1]"
BATCH_HINT = "use @ (np.matmul) and np.swapaxes(K, -1, -2): both broadcast the batch axes"
ROWS_HINT = (
    "each query's row of weights must sum to 1, as a softmax of the scores (L, S) over the key "
    "axis (-1) gives"
)
COLUMNS_HINT = (
    "the columns sum to 1 instead, as a softmax over the query axis (-2) gives: apply it over "
    "the key axis (-1) of the scores (L, S)"
)


@pytest.fixture
def attention(learner, request):
    """The learner's attention module, calling a known-good softmax where it calls its own
    (support.softmax_charge.use_known_good_softmax)."""
    use_known_good_softmax(learner, request)
    return learner.module("attention")


def check_attention(attention, Q, K, V, mask=None, *, hint=None, note="", learner=None):
    """scaled_dot_product_attention(Q, K, V, mask) equals the built-in: weights, then output.

    learner: given for masks with fully masked queries, whose NaN is not charged here when the
    learner's own softmax is where it comes from (support.softmax_charge.charged_to_softmax).
    """
    what = describe_call(
        "scaled_dot_product_attention", ("Q", Q), ("K", K), ("V", V), ("mask", mask), note=note
    )
    with attention_call_hints(mask):
        got = attention.scaled_dot_product_attention(Q, K, V, mask)
    if learner is not None and charged_to_softmax(learner, got, Q, K, V, mask, atol=1e-10):
        return
    mistakes = sdpa_mistakes(Q, K, V, mask, got=got)
    expect_pair(
        got,
        sdpa(Q, K, V, mask),
        what=what,
        atol=1e-10,
        array_type=np.ndarray,
        hints=(hint, hint),
        mistakes=mistakes,
    )


@pytest.mark.weight(3)
def test_matches_pytorch_unbatched(attention, rng):
    """equals F.scaled_dot_product_attention with L != S and d_k != d_v"""
    check_attention(attention, array(rng, 3, 4), array(rng, 5, 4), array(rng, 5, 6))


@pytest.mark.weight(2)
def test_weights_rows_sum_to_one(attention, rng):
    """each query's weights sum to 1 over the keys"""
    Q, K, V = array(rng, 4, 8), array(rng, 6, 8), array(rng, 6, 8)
    what = describe_call("scaled_dot_product_attention", ("Q", Q), ("K", K), ("V", V))
    with attention_call_hints():
        got = attention.scaled_dot_product_attention(Q, K, V)
    _, weights = pair_of(got, what=what, array_type=np.ndarray)
    _, mistaken_weights = sdpa_mistakes(Q, K, V)
    expect_close(
        weights.sum(axis=-1),
        np.ones(4),
        what=f"weights.sum(axis=-1) of {what}",
        atol=1e-10,
        hint=rows_hint(weights),
        mistakes=Lazy(lambda: {s: w.sum(axis=-1) for s, w in mistaken_weights.items()}),
    )


def rows_hint(weights: object) -> str:
    """What the weights' sums show: the columns summing to 1 (a softmax over the query axis,
    in a form no known mistake predicts) is said as such; otherwise only what each row must
    do, since no softmax, an unnormalised one or another axis would all fail the same way."""
    try:
        columns = np.asarray(weights, dtype=float).sum(axis=-2)
        over_queries = bool(np.allclose(columns, 1.0, atol=1e-10))
    except (TypeError, ValueError, np.exceptions.AxisError):
        over_queries = False
    return COLUMNS_HINT if over_queries else ROWS_HINT


@pytest.mark.weight(2)
def test_scale_is_one_over_sqrt_dk(attention, rng):
    """the scores are scaled by 1/sqrt(d_k)"""
    Q, K, V = array(rng, 3, 16), array(rng, 4, 16), array(rng, 4, 2)
    # d_k = 1, where 1/sqrt(d_k) is 1: right there, wrong here is the scale's doing
    hint = hint_when_right(attention, Q[:, :1], K[:, :1], V, None, SCALE_HINT)
    check_attention(attention, Q, K, V, hint=hint)


@pytest.mark.weight(2)
def test_masked_keys_weigh_zero(attention, rng):
    """masked keys get weight 0 (mask True = may attend)"""
    Q, K, V = array(rng, 4, 5), array(rng, 6, 5), array(rng, 6, 3)
    mask = key_mask(rng, 4, 6)
    # a mask of all True masks nothing: right there, wrong here is the masking's doing
    hint = hint_when_right(attention, Q, K, V, np.ones_like(mask), MASK_HINT)
    check_attention(attention, Q, K, V, mask, hint=hint)


def test_fully_masked_row_gives_zeros(attention, learner, rng):
    """a query with every key masked gets zero weights and a zero output, not NaN"""
    Q, K, V = array(rng, 3, 4), array(rng, 5, 4), array(rng, 5, 4)
    mask = key_mask(rng, 3, 5, blank_rows=1)
    note = " where row 0 of the mask is all False"
    allowed = mask.copy()
    allowed[0] = True  # no blank row: right there, wrong here is the blank row's doing
    hint = hint_when_right(attention, Q, K, V, allowed, BLANK_ROW_HINT)
    check_attention(attention, Q, K, V, mask, hint=hint, note=note, learner=learner)


def test_permuting_queries_and_keys(attention, rng):
    """permuting the queries permutes the outputs; permuting keys and values changes nothing"""
    Q, K, V = array(rng, 5, 4), array(rng, 5, 4), array(rng, 5, 3)
    own = attention.scaled_dot_product_attention

    def sdpa(*args):
        with attention_call_hints():
            return own(*args)

    out, weights = pair_of(
        sdpa(Q, K, V), what="scaled_dot_product_attention(Q, K, V)", array_type=np.ndarray
    )
    p = permutation(rng, 5)
    out_q, _ = pair_of(
        sdpa(Q[p], K, V), what="scaled_dot_product_attention(Q[p], K, V)", array_type=np.ndarray
    )
    expect_close(
        out_q,
        out[p],
        what="scaled_dot_product_attention(Q[p], K, V)",
        atol=1e-10,
        hint="each query's output must depend only on that query, K and V",
    )
    expect(  # outputs that ignore the queries permute as well: permuted, they must move
        not np.allclose(np.asarray(out_q, dtype=float), out, atol=1e-10),
        "Permuting the queries left every output where it was, so the queries that moved got "
        "the same output: each query's weights come from its own scores, "
        "softmax(Q K^T / sqrt(d_k)) row by row.",
    )
    out_kv, weights_kv = pair_of(
        sdpa(Q, K[p], V[p]),
        what="scaled_dot_product_attention(Q, K[p], V[p])",
        array_type=np.ndarray,
    )
    expect_close(
        out_kv,
        out,
        what="the output of scaled_dot_product_attention(Q, K[p], V[p])",
        atol=1e-10,
        hint="the order of the keys (with their values) must not matter",
    )
    expect_close(
        weights_kv,
        weights[:, p],
        atol=1e-10,
        what="the weights of scaled_dot_product_attention(Q, K[p], V[p])",
    )


@pytest.mark.weight(2)
def test_batched_swaps_only_last_two_axes_of_k(attention, rng):
    """batched arrays (B, L, d_k): K is transposed on its last two axes only"""
    Q, K, V = array(rng, 4, 3, 4), array(rng, 4, 4, 4), array(rng, 4, 4, 2)
    hint = hint_when_right(attention, Q[0], K[0], V[0], None, "use np.swapaxes(K, -1, -2) for K^T")
    check_attention(attention, Q, K, V, hint=hint)


def test_leading_axes_broadcast(attention, rng):
    """leading batch axes broadcast: Q (2, 1, L, d_k) with K, V (3, S, ...) and a mask (L, S)"""
    Q, K, V = array(rng, 2, 1, 3, 4), array(rng, 3, 5, 4), array(rng, 3, 5, 2)
    mask = key_mask(rng, 3, 5)
    hint = hint_when_right(attention, Q[0, 0], K[0], V[0], mask, BATCH_HINT)
    check_attention(attention, Q, K, V, mask, hint=hint)


def hint_when_right(attention, Q, K, V, mask, hint: str) -> str | None:
    """`hint` when the learner's attention is right on these inputs, on which the hint's cause
    cannot matter (one batch element; d_k = 1 for the scale; a mask that masks nothing): only
    then is the test's failure that cause's. None when this call fails too."""
    try:
        got, want = attention.scaled_dot_product_attention(Q, K, V, mask), sdpa(Q, K, V, mask)
        pairs = zip(got, want, strict=True)
        right = all(np.allclose(np.asarray(g), w, atol=1e-10) for g, w in pairs)
    except (LearnerError, TypeError, ValueError):
        return None
    return hint if right else None


#: What NumPy says when it meets the shapes inside the computation (matmul, a transpose).
NUMPY_ERRORS = ("matmul", "core dimension", "not aligned", "axes don't match", "broadcast")
UNNAMED_SHAPES = (
    "{what} raised ValueError, but its message does not name both shapes, {a} and {b}: say what "
    'was expected and what came (e.g. "Q and K must have the same width d_k, got Q of shape '
    '(3, 4) and K of shape (5, 6)"); an error NumPy raises inside the computation does not.'
)


@pytest.mark.uses()  # calls no function that calls the learner's softmax
@pytest.mark.parametrize(
    "shapes, problem, named",
    [
        (((3, 4), (5, 6), (5, 2)), "Q and K widths differ", (0, 1)),
        (((3, 4), (5, 4), (6, 2)), "K and V lengths differ", (1, 2)),
    ],
    ids=["widths_differ", "lengths_differ"],
)
def test_mismatched_shapes_raise(attention, rng, shapes, problem, named):
    """mismatched shapes raise ValueError with a sentence naming both shapes"""
    Q, K, V = (array(rng, *s) for s in shapes)
    what = describe_call("scaled_dot_product_attention", ("Q", Q), ("K", K), ("V", V))
    what = f"{what} ({problem})"
    error = expect_raises("ValueError", attention.scaled_dot_product_attention, Q, K, V, what=what)
    a, b = (shapes[i] for i in named)
    said = error.message.replace(" ", "")  # (3, 4), (3,4) and [3, 4] all name (3, 4)
    names = all(
        str(s).replace(" ", "") in said or str(list(s)).replace(" ", "") in said for s in (a, b)
    )
    numpy_said = any(text in error.message for text in NUMPY_ERRORS)  # no check of their own
    named = f" {NO_SHAPE_CHECK}" if numpy_said else ""
    expect(names, UNNAMED_SHAPES.format(what=what, a=a, b=b) + named)


def test_self_attention_projects_then_attends(attention, rng):
    """self_attention(X, W_q, W_k, W_v, mask) attends with Q = X W_q, K = X W_k, V = X W_v

    The mask is a padding mask (1, L): no query attends to the padded last tokens.
    """
    X, W_q, W_k, W_v = array(rng, 4, 8), array(rng, 8, 2), array(rng, 8, 2), array(rng, 8, 3)
    mask = padding_mask(rng, length=4)  # (1, 4)
    shown = (("X", X), ("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("mask", mask))
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    with attention_call_hints(mask):
        got = attention.self_attention(X, W_q, W_k, W_v, mask)
    mistakes = sdpa_mistakes(Q, K, V, mask, d_model=X.shape[-1], got=got)
    expect_pair(
        got,
        sdpa(Q, K, V, mask),
        what=describe_call("self_attention", *shown),
        atol=1e-10,
        array_type=np.ndarray,
        mistakes=mistakes,
    )


@pytest.mark.uses()  # calls no function that calls the learner's softmax
def test_cosine_similarity(attention, rng):
    """cosine_similarity returns a float in [-1, 1] equal to a.b / (|a| |b|)"""
    a, b = array(rng, 6), array(rng, 6)
    got = attention.cosine_similarity(a, b)
    expect(
        isinstance(got, float),
        f"cosine_similarity(a, b) returned {type(got).__name__}; "
        "expected a Python float. Hint: return float(...), not a numpy array or scalar.",
    )
    expected = F.cosine_similarity(torch.from_numpy(a), torch.from_numpy(b), dim=0).item()
    expect_close(got, expected, what="cosine_similarity(a, b)", atol=1e-12)
    expect_close(
        attention.cosine_similarity(a, -2.0 * a),
        -1.0,
        what="cosine_similarity(a, -2 * a)",
        atol=1e-12,
    )


@pytest.mark.uses()  # calls no function that calls the learner's softmax
@pytest.mark.parametrize(
    "a, b, problem",
    [
        ([0.0, 0.0, 0.0], [1.0, 2.0, 3.0], "a is a zero vector"),
        ([1.0, 2.0], [1.0, 2.0, 3.0], "the lengths differ"),
    ],
    ids=["zero_vector", "lengths_differ"],
)
def test_cosine_similarity_raises(attention, a, b, problem):
    """cosine_similarity raises ValueError for a zero vector or mismatched lengths"""
    expect_raises(
        "ValueError",
        attention.cosine_similarity,
        np.array(a),
        np.array(b),
        what=f"cosine_similarity({a}, {b}) ({problem})",
    )


@pytest.mark.uses()  # calls no function that calls the learner's softmax
def test_self_attention_module_parameters(attention, learner):
    """SelfAttention(8, 4, 6) creates W_q, W_k, W_v, in that order, without bias"""
    expected = [("W_q.weight", (4, 8)), ("W_k.weight", (4, 8)), ("W_v.weight", (6, 8))]
    expect_parameters(
        learner,
        attention.SelfAttention(8, 4, 6),
        expected,
        ordered=True,
        what="SelfAttention(8, 4, 6)",
        hint="create W_q, W_k, W_v in this order with nn.Linear(..., bias=False)",
    )


@pytest.mark.uses()  # calls no function that calls the learner's softmax
@pytest.mark.weight(2)
@pytest.mark.parametrize("batched", [False, True], ids=["unbatched", "batched"])
def test_self_attention_module_forward(attention, rng, batched):
    """SelfAttention(x, mask) equals attention of its own projections"""
    m = attention.SelfAttention(6, 4, 5)
    state = {
        "W_q.weight": tensor(rng, 4, 6),
        "W_k.weight": tensor(rng, 4, 6),
        "W_v.weight": tensor(rng, 5, 6),
    }
    m.load_state_dict(state)
    shape = (2, 3, 6) if batched else (3, 6)
    x, mask = tensor(rng, *shape), torch.from_numpy(key_mask(rng, *shape[:-1], 3))
    Q, K, V = (to_numpy(x @ state[f"W_{p}.weight"].T) for p in "qkv")
    what = describe_call("SelfAttention(6, 4, 5)", ("x", x), ("mask", mask))
    with self_attention_hints(x, 4):
        got = pair_of(m(x, mask), what=what, array_type=torch.Tensor)
    mistakes = sdpa_mistakes(Q, K, V, mask.numpy(), d_model=6, got=got, torch_softmax=True)
    expect_pair(
        got,
        sdpa(Q, K, V, mask.numpy()),
        atol=1e-5,
        array_type=torch.Tensor,
        what=what,
        mistakes=mistakes,
    )
