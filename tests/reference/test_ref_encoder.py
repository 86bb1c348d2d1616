"""The reference feed-forward, Add & Norm, EncoderLayer and Encoder equal PyTorch's built-ins."""

import pytest
import torch
from t101.add_norm import AddNorm
from t101.encoder import Encoder, EncoderLayer
from t101.feed_forward import PositionwiseFeedForward

from tests.graders.support.torch_equivalents import (
    torch_encoder_forward,
    torch_encoder_from,
    torch_encoder_layer_from,
)

B, L, D, H, D_FF = 2, 6, 16, 4, 24


def _mask(kind: str) -> torch.Tensor | None:
    """A contract mask (True = may attend) with no fully masked query row."""
    if kind == "none":
        return None
    full = torch.rand(B, H, L, L) > 0.4
    full[..., 0] = True
    return {"2d": full[0, 0], "3d": full[:, 0], "4d": full}[kind]


def test_feed_forward_is_w2_relu_w1():
    ffn = PositionwiseFeedForward(D, D_FF)
    assert [(n, tuple(p.shape)) for n, p in ffn.named_parameters()] == [
        ("W_1.weight", (D_FF, D)),
        ("W_1.bias", (D_FF,)),
        ("W_2.weight", (D, D_FF)),
        ("W_2.bias", (D,)),
    ]
    x = torch.randn(B, L, D)
    hidden = (x @ ffn.W_1.weight.T + ffn.W_1.bias).clamp(min=0)
    torch.testing.assert_close(ffn(x), hidden @ ffn.W_2.weight.T + ffn.W_2.bias)


def test_add_norm_normalises_the_residual_sum_per_token():
    add_norm = AddNorm(D, eps=1e-6)
    with torch.no_grad():
        add_norm.norm.weight.uniform_(0.5, 1.5)
        add_norm.norm.bias.normal_()
    assert [n for n, _ in add_norm.named_parameters()] == ["norm.weight", "norm.bias"]
    assert add_norm.norm.eps == 1e-6
    x, y = torch.randn(B, L, D, dtype=torch.float64), torch.randn(B, L, D, dtype=torch.float64)
    z = x + y
    normed = (z - z.mean(-1, keepdim=True)) / torch.sqrt(
        z.var(-1, unbiased=False, keepdim=True) + 1e-6
    )
    expected = normed * add_norm.norm.weight + add_norm.norm.bias
    torch.testing.assert_close(add_norm.double()(x, y), expected, atol=1e-12, rtol=0)


def test_add_norm_drops_out_the_sublayer_output_not_the_residual():
    add_norm = AddNorm(D, dropout=1.0)  # every sublayer activation dropped in training
    x, y = torch.randn(B, L, D), torch.randn(B, L, D)
    torch.testing.assert_close(add_norm(x, y), add_norm.norm(x))
    add_norm.eval()
    torch.testing.assert_close(add_norm(x, y), add_norm.norm(x + y))


def test_encoder_layer_submodules_in_contract_order():
    layer = EncoderLayer(D, H, D_FF)
    names = [n for n, _ in layer.named_children()]
    assert names[:4] == ["self_attn", "add_norm_1", "feed_forward", "add_norm_2"]
    assert type(layer.self_attn).__name__ == "MultiHeadAttention"


@pytest.mark.parametrize("mask_kind", ["none", "2d", "3d", "4d"])
def test_encoder_layer_equals_torch(mask_kind):
    ours = EncoderLayer(D, H, D_FF).eval()
    theirs = torch_encoder_layer_from(ours.state_dict(), D, H, D_FF)
    x, mask = torch.randn(B, L, D), _mask(mask_kind)
    with torch.no_grad():
        got, expected = ours(x, mask), torch_encoder_forward(theirs, x, mask)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mask_kind", ["none", "3d"])
def test_encoder_equals_torch(mask_kind):
    ours = Encoder(3, D, H, D_FF).eval()
    theirs = torch_encoder_from(ours.state_dict(), 3, D, H, D_FF)
    x, mask = torch.randn(B, L, D), _mask(mask_kind)
    with torch.no_grad():
        got, expected = ours(x, mask), torch_encoder_forward(theirs, x, mask)
    assert got.shape == (B, L, D)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_encoder_equals_torch_in_float64_with_gradients():
    ours = Encoder(2, D, H, D_FF).double()
    theirs = torch_encoder_from(ours.state_dict(), 2, D, H, D_FF)
    x = torch.randn(B, L, D, dtype=torch.float64)
    got, expected = ours(x), torch_encoder_forward(theirs, x)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, expected, atol=1e-12, rtol=0)


def test_gradients_reach_every_encoder_parameter():
    encoder = Encoder(2, D, H, D_FF)
    x = torch.randn(B, L, D, requires_grad=True)
    mask = torch.ones(L, L, dtype=torch.bool).tril()
    (encoder(x, mask) * torch.randn(B, L, D)).sum().backward()
    for name, p in encoder.named_parameters():
        assert p.grad is not None, f"{name} received no gradient"
        assert torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, name
    assert x.grad is not None and x.grad.abs().sum() > 0


def test_encoder_layers_are_independent():
    encoder = Encoder(3, D, H, D_FF)
    assert isinstance(encoder.layers, torch.nn.ModuleList) and len(encoder.layers) == 3
    assert all(isinstance(layer, EncoderLayer) for layer in encoder.layers)
    storages = [p.untyped_storage().data_ptr() for p in encoder.parameters()]
    assert len(storages) == len(set(storages)) == 3 * 16
    first, second = encoder.layers[0], encoder.layers[1]
    assert not torch.equal(first.self_attn.W_q.weight, second.self_attn.W_q.weight)


def test_inputs_are_not_modified_and_dtype_is_kept():
    encoder = Encoder(2, D, H, D_FF).eval()
    x = torch.randn(B, L, D)
    mask = torch.rand(B, L, L) > 0.3
    x_before, mask_before = x.clone(), mask.clone()
    out = encoder(x, mask)
    assert torch.equal(x, x_before) and torch.equal(mask, mask_before)
    assert out.dtype == torch.float32
    assert encoder.double()(x.double(), mask).dtype == torch.float64


def test_indivisible_width_raises_from_the_layer():
    with pytest.raises(ValueError, match="num_heads"):
        Encoder(2, 10, 3, 8)
