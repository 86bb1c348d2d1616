"""Hidden graders for t101/attention.py: larger and batched shapes, masks with fully masked rows,
the class notebook's seeded SelfAttention run, compared with the reference and the built-ins; a
result that matches a known mistake (mistakes/attention.toml) is named, without values."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograder.feedback import expect, expect_close, expect_raises
from tests.graders.hidden.oracles import expect_grads_match, reference_grads
from tests.graders.support.compare import describe_call, expect_pair, pair_of
from tests.graders.support.inputs import array, key_mask, permutation, tensor, to_numpy
from tests.graders.support.mistakes import (
    attention_call_hints,
    sdpa,
    sdpa_mistakes,
    self_attention_hints,
)
from tests.graders.support.params import expect_gradients, expect_parameters
from tests.graders.support.softmax_charge import charged_to_softmax, use_known_good_softmax

# The NumPy functions call the learner's softmax (where no stand-in replaces it); the tests of
# what does not (shape checks, cosine_similarity, the torch SelfAttention) say so: uses().
pytestmark = [pytest.mark.attention, pytest.mark.uses("softmax")]

# The class notebook (course notes, cells 23-24): torch.manual_seed(0), an nn.Embedding(8, 8)
# over this vocabulary, then the projections; the two "bank" outputs have cosine 0.814038...
VOCAB = ["bank", "of", "the", "river", "account", "money", "has", "today"]
SENTENCES = (["bank", "of", "the", "river"], ["bank", "account", "has", "money"])
NOTEBOOK_COSINE = 0.814038
REFERENCE_OFF = (
    "The reference SelfAttention no longer reproduces the class notebook's cosine 0.814038 "
    "under torch.manual_seed(0); the reference or the notebook setup changed."
)


@pytest.fixture
def attention(learner, request):
    """The learner's attention module, calling a known-good softmax where it calls its own
    (support.softmax_charge.use_known_good_softmax)."""
    use_known_good_softmax(learner, request)
    return learner.module("attention")


def check_against_reference(attention, reference, Q, K, V, mask=None, *, hint=None, learner=None):
    """learner: given for masks with fully masked queries (softmax_charge.charged_to_softmax)."""
    what = describe_call(
        "scaled_dot_product_attention", ("Q", Q), ("K", K), ("V", V), ("mask", mask)
    )
    with attention_call_hints(mask):
        got = attention.scaled_dot_product_attention(Q, K, V, mask)
    if learner is not None and charged_to_softmax(learner, got, Q, K, V, mask, atol=1e-10):
        return
    expected = reference.module("attention").scaled_dot_product_attention(Q, K, V, mask)
    mistakes = sdpa_mistakes(Q, K, V, mask, got=got)
    expect_pair(
        got,
        expected,
        what=what,
        atol=1e-10,
        array_type=np.ndarray,
        hints=(hint, hint),
        mistakes=mistakes,
    )


@pytest.mark.weight(3)
def test_batched_masks_with_blank_rows(attention, learner, reference, rng):
    """batched (B, L, d_k) inputs with a (B, L, S) mask, some rows fully masked"""
    Q, K, V = array(rng, 3, 6, 8), array(rng, 3, 9, 8), array(rng, 3, 9, 5)
    mask = key_mask(rng, 3, 6, 9, blank_rows=2)
    check_against_reference(
        attention,
        reference,
        Q,
        K,
        V,
        mask,
        hint="masked keys weigh 0; a fully masked query gives zeros",
        learner=learner,
    )


@pytest.mark.weight(2)
def test_four_dimensional_broadcast(attention, reference, rng):
    """4-D inputs (B, h, L, d_k) with a mask (B, 1, L, S) broadcast over the heads"""
    Q, K, V = array(rng, 2, 3, 4, 6), array(rng, 2, 3, 5, 6), array(rng, 2, 3, 5, 7)
    mask = key_mask(rng, 2, 1, 4, 5)
    check_against_reference(attention, reference, Q, K, V, mask)


@pytest.mark.weight(2)
def test_wide_keys_scale(attention, rng):
    """with d_k = 64 the scale 1/sqrt(d_k) matters: equals the built-in"""
    Q, K, V = array(rng, 5, 64), array(rng, 7, 64), array(rng, 7, 3)
    what = describe_call("scaled_dot_product_attention", ("Q", Q), ("K", K), ("V", V))
    mistakes = sdpa_mistakes(Q, K, V)
    with attention_call_hints():
        got = attention.scaled_dot_product_attention(Q, K, V)
    expect_pair(
        got,
        sdpa(Q, K, V),
        what=what,
        atol=1e-10,
        array_type=np.ndarray,
        mistakes=mistakes,
    )


def test_batched_square_shapes(attention, reference, rng):
    """batched inputs where B = S = d_k: only the last two axes of K are swapped"""
    Q, K, V = array(rng, 6, 2, 6), array(rng, 6, 6, 6), array(rng, 6, 6, 3)
    check_against_reference(attention, reference, Q, K, V)


def test_keys_are_a_set(attention, rng):
    """permuting keys and values together leaves every batched output unchanged"""
    Q, K, V = array(rng, 2, 4, 5), array(rng, 2, 6, 5), array(rng, 2, 6, 3)
    mask = key_mask(rng, 2, 4, 6)
    p = permutation(rng, 6)
    with attention_call_hints(mask):
        sdpa, what = attention.scaled_dot_product_attention, "scaled_dot_product_attention"
        out, _ = pair_of(sdpa(Q, K, V, mask), what=what, array_type=np.ndarray)
        out_p, _ = pair_of(
            sdpa(Q, K[:, p], V[:, p], mask[..., p]), what=what, array_type=np.ndarray
        )
    expect_close(
        out_p,
        out,
        what="scaled_dot_product_attention with keys, values and mask columns permuted together",
        atol=1e-10,
        hint="the output changes when the key/value pairs (and their mask columns) are permuted "
        "together: attention must treat the keys as a set, each key with its own value and mask "
        "column, the softmax over the key axis",
        mistakes=sdpa_mistakes(Q, K[:, p], V[:, p], mask[..., p])[0],
    )


@pytest.mark.uses()  # calls no function that calls the learner's softmax
@pytest.mark.parametrize(
    "shapes",
    [((2, 3, 4), (2, 5, 3), (2, 5, 4)), ((2, 3, 4), (2, 5, 4), (2, 4, 4))],
    ids=["widths", "lengths"],
)
def test_batched_mismatches_raise(attention, rng, shapes):
    """batched inputs with mismatched widths or lengths raise ValueError"""
    Q, K, V = (array(rng, *s) for s in shapes)
    what = describe_call("scaled_dot_product_attention", ("Q", Q), ("K", K), ("V", V))
    expect_raises("ValueError", attention.scaled_dot_product_attention, Q, K, V, what=what)


@pytest.mark.weight(2)
def test_batched_self_attention(attention, learner, reference, rng):
    """self_attention on batched X (B, L, d_model) with d_k != d_v and a mask"""
    X, W_q, W_k, W_v = array(rng, 2, 5, 10), array(rng, 10, 4), array(rng, 10, 4), array(rng, 10, 6)
    mask = key_mask(rng, 2, 5, 5, blank_rows=1)
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    expected = reference.module("attention").self_attention(X, W_q, W_k, W_v, mask)
    with attention_call_hints(mask):
        got = attention.self_attention(X, W_q, W_k, W_v, mask)
    mistakes = sdpa_mistakes(Q, K, V, mask, d_model=X.shape[-1], got=got)
    if charged_to_softmax(learner, got, Q, K, V, mask, atol=1e-10):
        return
    shown = (("X", X), ("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("mask", mask))
    expect_pair(
        got,
        expected,
        atol=1e-10,
        what=describe_call("self_attention", *shown),
        array_type=np.ndarray,
        mistakes=mistakes,
    )


@pytest.mark.uses()  # calls no function that calls the learner's softmax
def test_cosine_similarity_values(attention, reference, rng):
    """cosine_similarity matches the reference, gives 1 for parallel and 0 for orthogonal vectors"""
    cos = attention.cosine_similarity
    a, b = array(rng, 50), array(rng, 50)
    expect_close(
        cos(a, b),
        reference.module("attention").cosine_similarity(a, b),
        what="cosine_similarity(a, b) with 50-dimensional a, b",
        atol=1e-12,
    )
    expect_close(cos(a, 3.0 * a), 1.0, what="cosine_similarity(a, 3 * a)", atol=1e-12)
    e1, e2 = np.eye(4)[0], np.eye(4)[2]
    got = cos(e1, e2)
    expect(isinstance(got, float), "cosine_similarity(a, b) must return a Python float.")
    expect_close(got, 0.0, what="cosine_similarity of two orthogonal vectors", atol=1e-12)


@pytest.mark.uses()  # calls no function that calls the learner's softmax
def test_cosine_similarity_zero_b_raises(attention):
    """cosine_similarity raises ValueError when b is the zero vector"""
    expect_raises(
        "ValueError",
        attention.cosine_similarity,
        np.ones(3),
        np.zeros(3),
        what="cosine_similarity(a, b) with b a zero vector",
    )


def notebook_run(make_attention):
    """The class notebook's two sentences through one seeded embedding and SelfAttention."""
    torch.manual_seed(0)
    embedding = nn.Embedding(len(VOCAB), 8)
    reference_module = make_attention()  # created right after the embedding, as in class
    with torch.no_grad():
        xs = [embedding(torch.tensor([VOCAB.index(w) for w in s])) for s in SENTENCES]
    return reference_module, xs


@pytest.mark.uses()  # calls no function that calls the learner's softmax
@pytest.mark.weight(2)
def test_reproduces_class_notebook(attention, learner, reference):
    """SelfAttention(8) reproduces the class notebook's bank cosine 0.814038"""
    ref, xs = notebook_run(lambda: reference.build("attention", "SelfAttention", 8))
    with torch.no_grad():
        ref_out = [ref(x)[0] for x in xs]
    if (
        abs(F.cosine_similarity(ref_out[0][0], ref_out[1][0], dim=0).item() - NOTEBOOK_COSINE)
        > 1e-5
    ):
        raise RuntimeError(REFERENCE_OFF)
    m = attention.SelfAttention(8)
    expect_parameters(
        learner,
        m,
        [("W_q.weight", (8, 8)), ("W_k.weight", (8, 8)), ("W_v.weight", (8, 8))],
        ordered=True,
        what="SelfAttention(8)",
    )
    m.load_state_dict(ref.state_dict())
    what = "SelfAttention(8)(x)"
    got = [pair_of(m(x), what=what, array_type=torch.Tensor) for x in xs]
    for i, (pair, r, x) in enumerate(zip(got, ref_out, xs, strict=True)):
        with torch.no_grad():
            Q, K, V = (to_numpy(getattr(ref, f"W_{p}")(x)) for p in "qkv")
        outputs, _ = sdpa_mistakes(Q, K, V, d_model=8, got=pair)  # named, as in the other tests
        what = f"SelfAttention(8)(x) for the notebook's sentence {i + 1}"
        expect_close(pair[0], r, what=what, atol=1e-5, mistakes=outputs)
    cosine = F.cosine_similarity(got[0][0][0], got[1][0][0], dim=0).item()
    expect_close(cosine, NOTEBOOK_COSINE, what="the cosine between the two bank outputs", atol=1e-5)


@pytest.mark.uses()  # calls no function that calls the learner's softmax
def test_self_attention_module_blank_row_and_gradients(attention, learner, reference, rng):
    """SelfAttention(10, 4, 6): a fully masked row gives zeros, and gradients match"""
    m = attention.SelfAttention(10, 4, 6)
    ref = reference.build("attention", "SelfAttention", 10, 4, 6)
    m.load_state_dict(ref.state_dict())
    x, mask = tensor(rng, 2, 5, 10), torch.from_numpy(key_mask(rng, 2, 5, 5, blank_rows=1))
    with torch.no_grad():
        expected = ref(x, mask)
        Q, K, V = (to_numpy(getattr(ref, f"W_{p}")(x)) for p in "qkv")
    what = describe_call("SelfAttention(10, 4, 6)", ("x", x), ("mask", mask))
    with self_attention_hints(x, 4):
        got = pair_of(m(x, mask), what=what, array_type=torch.Tensor)
    mistakes = sdpa_mistakes(Q, K, V, mask.numpy(), d_model=10, got=got, torch_softmax=True)
    expect_pair(got, expected, what=what, atol=1e-5, array_type=torch.Tensor, mistakes=mistakes)
    g = tensor(rng, 2, 5, 6)
    expect_gradients(learner, m, x, mask, cotangent=g, what=what)
    expect_grads_match(
        learner.parameter_grads(m, x, mask, cotangent=g),
        reference_grads(ref, x, mask, cotangent=g),
        what=what,
        atol=1e-4,
    )
