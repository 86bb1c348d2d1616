"""The reference attention (NumPy and single-head PyTorch) equals PyTorch's built-in."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from t101.attention import (
    SelfAttention,
    cosine_similarity,
    scaled_dot_product_attention,
    self_attention,
)


def _torch_sdpa(Q, K, V, mask=None):
    """F.scaled_dot_product_attention on NumPy arrays (float64), with its weights."""
    q, k, v = (torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V))
    m = None if mask is None else torch.from_numpy(mask)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m).numpy()
    # The built-in returns no weights; recover them with V = identity (one key per value row).
    eye = torch.eye(K.shape[-2], dtype=q.dtype).expand(*k.shape[:-1], K.shape[-2])
    weights = F.scaled_dot_product_attention(q, k, eye, attn_mask=m).numpy()
    return out, weights


@pytest.mark.parametrize("use_mask", [False, True])
def test_matches_torch_batched_with_L_not_S_and_dk_not_dv(rng, use_mask):
    B, h, L, S, d_k, d_v = 2, 3, 4, 6, 5, 7
    Q = rng.normal(size=(B, h, L, d_k))
    K = rng.normal(size=(B, h, S, d_k))
    V = rng.normal(size=(B, h, S, d_v))
    mask = None
    if use_mask:
        mask = rng.random(size=(B, 1, L, S)) > 0.4
        mask[..., 0] = True  # no fully masked row: the built-in gives NaN there
    out, weights = scaled_dot_product_attention(Q, K, V, mask)
    expected_out, expected_weights = _torch_sdpa(Q, K, V, mask)
    assert out.shape == (B, h, L, d_v) and weights.shape == (B, h, L, S)
    np.testing.assert_allclose(out, expected_out, atol=1e-12)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-12)
    if use_mask:
        assert np.all(weights[np.broadcast_to(~mask, weights.shape)] == 0)


def test_batch_axes_broadcast_and_only_last_two_axes_of_K_swap(rng):
    Q = rng.normal(size=(2, 3, 4, 5))  # (B, h, L, d_k)
    K = rng.normal(size=(3, 6, 5))  # (h, S, d_k): broadcast over B
    V = rng.normal(size=(3, 6, 2))
    out, weights = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (2, 3, 4, 2) and weights.shape == (2, 3, 4, 6)
    for b in range(2):
        for i in range(3):
            scores = Q[b, i] @ K[i].T / np.sqrt(5)
            w = np.exp(scores - scores.max(-1, keepdims=True))
            w /= w.sum(-1, keepdims=True)
            np.testing.assert_allclose(weights[b, i], w, atol=1e-12)
            np.testing.assert_allclose(out[b, i], w @ V[i], atol=1e-12)


def test_float32_stays_float32(rng):
    Q, K, V = (rng.normal(size=(3, 4)).astype(np.float32) for _ in range(3))
    out, weights = scaled_dot_product_attention(Q, K, V, np.tril(np.ones((3, 3), dtype=bool)))
    assert out.dtype == np.float32 and weights.dtype == np.float32


def test_fully_masked_row_gives_zero_weights_and_zero_output(rng):
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    mask = np.ones((3, 5), dtype=bool)
    mask[1] = False
    out, weights = scaled_dot_product_attention(Q, K, V, mask)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))
    np.testing.assert_array_equal(weights[1], np.zeros(5))
    np.testing.assert_array_equal(out[1], np.zeros(2))
    np.testing.assert_allclose(weights[[0, 2]].sum(-1), [1.0, 1.0], atol=1e-12)


def test_width_mismatch_names_both_shapes(rng):
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)"):
        scaled_dot_product_attention(np.ones((2, 3)), np.ones((4, 5)), np.ones((4, 1)))


def test_length_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(6, 2\)"):
        scaled_dot_product_attention(np.ones((2, 3)), np.ones((4, 3)), np.ones((6, 2)))


def test_self_attention_projects_then_attends(rng):
    X = rng.normal(size=(2, 4, 6))
    W_q, W_k, W_v = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 5))
    mask = np.tril(np.ones((4, 4), dtype=bool))
    out, weights = self_attention(X, W_q, W_k, W_v, mask)
    expected_out, expected_weights = _torch_sdpa(X @ W_q, X @ W_k, X @ W_v, mask)
    assert out.shape == (2, 4, 5)
    np.testing.assert_allclose(out, expected_out, atol=1e-12)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-12)


def test_cosine_similarity_values():
    assert cosine_similarity(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == 0.0
    assert cosine_similarity(np.array([1.0, 2.0]), np.array([-2.0, -4.0])) == pytest.approx(-1.0)
    value = cosine_similarity(np.array([1.0, 2.0, 2.0]), np.array([2.0, 0.0, 1.0]))
    assert type(value) is float
    assert value == pytest.approx(4 / (3 * np.sqrt(5)), abs=1e-15)


@pytest.mark.parametrize(
    "a, b, words",
    [
        ([0.0, 0.0], [1.0, 2.0], "zero vector"),
        ([1.0, 2.0], [1.0, 2.0, 3.0], r"\(2,\) and \(3,\)"),
        ([[1.0, 2.0]], [[1.0, 2.0]], "1-D"),
    ],
)
def test_cosine_similarity_rejects_bad_vectors(a, b, words):
    with pytest.raises(ValueError, match=words):
        cosine_similarity(np.array(a), np.array(b))


def test_self_attention_module_parameters_and_order():
    torch.manual_seed(3)
    module = SelfAttention(6, d_k=4, d_v=5)
    names = [(n, tuple(p.shape)) for n, p in module.named_parameters()]
    assert names == [("W_q.weight", (4, 6)), ("W_k.weight", (4, 6)), ("W_v.weight", (5, 6))]
    torch.manual_seed(3)
    w_q, w_k = torch.nn.Linear(6, 4, bias=False), torch.nn.Linear(6, 4, bias=False)
    torch.testing.assert_close(module.W_q.weight, w_q.weight)
    torch.testing.assert_close(module.W_k.weight, w_k.weight)
    assert SelfAttention(8).W_v.weight.shape == (8, 8)


@pytest.mark.parametrize("batched", [False, True])
def test_self_attention_module_equals_numpy_reference(rng, batched):
    module = SelfAttention(6, d_k=4, d_v=5).double()
    shape = (2, 4, 6) if batched else (4, 6)
    x = torch.from_numpy(rng.normal(size=shape))
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    out, weights = module(x, mask)
    W = {n: p.detach().numpy().T for n, p in module.named_parameters()}  # (d_model, d_k)
    expected_out, expected_weights = self_attention(
        x.numpy(), W["W_q.weight"], W["W_k.weight"], W["W_v.weight"], mask.numpy()
    )
    assert out.shape == shape[:-1] + (5,) and weights.shape == shape[:-1] + (4,)
    np.testing.assert_allclose(out.detach().numpy(), expected_out, atol=1e-12)
    np.testing.assert_allclose(weights.detach().numpy(), expected_weights, atol=1e-12)


def test_self_attention_module_fully_masked_row_is_zero_with_finite_gradients():
    module = SelfAttention(4)
    x = torch.randn(3, 4, requires_grad=True)
    mask = torch.tensor([[True, False, True], [False, False, False], [True, True, True]])
    out, weights = module(x, mask)
    assert torch.equal(weights[1], torch.zeros(3)) and torch.equal(out[1], torch.zeros(4))
    out.sum().backward()
    assert torch.isfinite(x.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in module.parameters())
