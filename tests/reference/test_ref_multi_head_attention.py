"""The reference MultiHeadAttention equals nn.MultiheadAttention with the weights copied."""

import pytest
import torch
from t101.multi_head_attention import MultiHeadAttention

from tests.graders.support.torch_equivalents import torch_mha_forward, torch_mha_from

B, L, S, D, H = 2, 5, 7, 12, 3


def _mask(kind: str) -> torch.Tensor | None:
    """A contract mask (True = may attend) with no fully masked query row."""
    if kind == "none":
        return None
    full = torch.rand(B, H, L, S) > 0.4
    full[..., 0] = True
    return {"2d": full[0, 0], "3d": full[:, 0], "4d": full}[kind]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mask_kind", ["none", "2d", "3d", "4d"])
@pytest.mark.parametrize("bias", [True, False])
def test_cross_attention_equals_torch(bias, mask_kind, dtype):
    ours = MultiHeadAttention(D, H, bias=bias).to(dtype).eval()
    theirs = torch_mha_from(ours.state_dict(), D, H, bias=bias)
    query = torch.randn(B, L, D, dtype=dtype)
    key, value = torch.randn(B, S, D, dtype=dtype), torch.randn(B, S, D, dtype=dtype)
    mask = _mask(mask_kind)
    with torch.no_grad():
        out, weights = ours(query, key, value, mask)
        expected_out, expected_weights = torch_mha_forward(theirs, query, key, value, mask)
    assert out.shape == (B, L, D) and weights.shape == (B, H, L, S)
    assert out.dtype == dtype and weights.dtype == dtype
    tol = {"atol": 1e-5, "rtol": 1e-5} if dtype == torch.float32 else {"atol": 1e-12, "rtol": 0}
    torch.testing.assert_close(out, expected_out, **tol)
    torch.testing.assert_close(weights, expected_weights, **tol)


def test_self_attention_equals_torch_and_gradients_match():
    ours = MultiHeadAttention(D, H).double()
    theirs = torch_mha_from(ours.state_dict(), D, H).train()
    x = torch.randn(B, L, D, dtype=torch.float64, requires_grad=True)
    x2 = x.detach().clone().requires_grad_(True)
    out, _ = ours(x, x, x)
    expected, _ = torch_mha_forward(theirs, x2, x2, x2)
    torch.testing.assert_close(out, expected, atol=1e-12, rtol=0)
    g = torch.randn_like(out)
    out.backward(g)
    expected.backward(g)
    torch.testing.assert_close(x.grad, x2.grad, atol=1e-12, rtol=0)
    w_q_grad = theirs.in_proj_weight.grad[:D]
    torch.testing.assert_close(ours.W_q.weight.grad, w_q_grad, atol=1e-12, rtol=0)


def test_head_i_uses_rows_i_dk_to_i_plus_1_dk():
    d_k = D // H
    ours = MultiHeadAttention(D, H, bias=False).double().eval()
    query, key = (
        torch.randn(1, L, D, dtype=torch.float64),
        torch.randn(1, S, D, dtype=torch.float64),
    )
    _, weights = ours(query, key, key)
    for i in range(H):
        rows = slice(i * d_k, (i + 1) * d_k)
        q = query[0] @ ours.W_q.weight[rows].T  # (L, d_k)
        k = key[0] @ ours.W_k.weight[rows].T  # (S, d_k)
        expected = torch.softmax(q @ k.T / d_k**0.5, dim=-1)
        torch.testing.assert_close(weights[0, i], expected, atol=1e-12, rtol=0)


def test_parameters_are_created_in_order_with_the_right_shapes():
    names = [(n, tuple(p.shape)) for n, p in MultiHeadAttention(D, H).named_parameters()]
    expected = []
    for w in ("W_q", "W_k", "W_v", "W_o"):
        expected += [(f"{w}.weight", (D, D)), (f"{w}.bias", (D,))]
    assert names == expected
    no_bias = [n for n, _ in MultiHeadAttention(D, H, bias=False).named_parameters()]
    assert no_bias == ["W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"]


def test_indivisible_width_is_a_sentence_with_both_numbers():
    with pytest.raises(ValueError, match=r"d_model=10 and num_heads=3") as info:
        MultiHeadAttention(10, 3)
    assert str(info.value).endswith(".")


def test_fully_masked_query_gives_zero_weights_and_bias_only_output():
    ours = MultiHeadAttention(D, H).eval()
    x = torch.randn(B, L, D)
    mask = torch.ones(B, L, L, dtype=torch.bool)
    mask[1, 2] = False  # batch element 1, query 2 may attend nothing
    out, weights = ours(x, x, x, mask)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert torch.equal(weights[1, :, 2], torch.zeros(H, L))
    torch.testing.assert_close(out[1, 2], ours.W_o.bias.detach())


def test_3d_mask_is_per_batch_element():
    ours = MultiHeadAttention(D, H).eval()
    x = torch.randn(B, L, D)
    mask = torch.ones(B, L, L, dtype=torch.bool)
    mask[0] = torch.ones(L, L, dtype=torch.bool).tril()  # causal for element 0 only
    _, weights = ours(x, x, x, mask)
    assert torch.all(weights[0].triu(1) == 0)
    assert torch.all(weights[1] > 0)


def test_dropout_acts_on_the_attention_weights_in_training_only():
    ours = MultiHeadAttention(D, H, dropout=0.5)
    x = torch.randn(B, L, D)
    _, dropped = ours(x, x, x)
    ours.eval()
    _, clean = ours(x, x, x)
    kept = dropped != 0
    assert kept.any() and (~kept).any()
    torch.testing.assert_close(dropped[kept], 2 * clean[kept])  # survivors scaled by 1/(1-p)
    torch.testing.assert_close(clean.sum(-1), torch.ones(B, H, L))
