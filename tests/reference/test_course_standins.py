"""This course's stand-ins (solutions/standins.py) are known-good and honour the contract: each
has the attributes, submodules and parameters design/STUDENT_API.md gives the module it
replaces (learner code touching `self.add_norm_1.norm` or `.dropout` works on one), and each
equals the torch built-in the contract says it equals, masks and fully masked queries included.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from autograder.runtime.shared.standin_registry import load
from tests.graders.support.torch_equivalents import (
    torch_encoder_forward,
    torch_encoder_layer_from,
    torch_mha_forward,
    torch_mha_from,
)

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = load((ROOT / "solutions" / "standins.py").read_text(encoding="utf-8"))
MHA = {"d_model": 8, "num_heads": 2, "dropout": 0.1, "bias": True}
FFN = {"d_model": 8, "d_ff": 16, "dropout": 0.1}
NORM = {"d_model": 8, "dropout": 0.1, "eps": 1e-5}
LAYER = {"d_model": 8, "num_heads": 2, "d_ff": 16, "dropout": 0.1, "eps": 1e-5}


def seeded(kind: str, config: dict, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    module = REGISTRY.build(kind, config)
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(
                torch.randn_like(p) * (0.2 if "norm" in name else 0.4) + ("norm.weight" in name)
            )
    return module


def inputs(seed: int, blank: bool = False):
    torch.manual_seed(seed)
    mask = torch.rand(2, 5, 5) < 0.6
    mask[..., 0] = True
    if blank:
        mask[0, 1] = False  # a query whose keys are all masked
    return torch.randn(2, 5, 8), mask


@pytest.mark.parametrize(
    "kind, config, names",
    [
        (
            "multi_head_attention",
            MHA,
            [f"W_{p}.{k}" for p in "qkvo" for k in ("weight", "bias")],
        ),
        ("feed_forward", FFN, ["W_1.weight", "W_1.bias", "W_2.weight", "W_2.bias"]),
        ("add_norm", NORM, ["norm.weight", "norm.bias"]),
    ],
)
def test_each_standin_has_the_contracts_parameters_and_dropout(kind, config, names):
    module = REGISTRY.build(kind, config)
    assert [name for name, _ in module.named_parameters()] == names
    assert isinstance(module.dropout, torch.nn.Dropout) and module.dropout.p == 0.1
    assert module.training is False


def test_the_layer_standin_has_the_contracts_submodules_and_names():
    layer = REGISTRY.build("encoder_layer", LAYER)
    assert [name for name, _ in layer.named_children()] == [
        "self_attn",
        "add_norm_1",
        "feed_forward",
        "add_norm_2",
    ]
    assert layer.add_norm_1.norm.eps == 1e-5 and layer.self_attn.W_q.bias is not None


@pytest.mark.parametrize(
    "shape", [(5, 5), (2, 5, 5), (2, 2, 5, 5)], ids=["L_S", "B_L_S", "B_h_L_S"]
)
def test_the_attention_standin_equals_the_built_in(shape):
    mha = seeded("multi_head_attention", MHA, 0)
    x, _ = inputs(1)
    torch.manual_seed(2)
    mask = torch.rand(*shape) < 0.6
    mask[..., 0] = True
    built_in = torch_mha_from(mha.state_dict(), 8, 2)
    with torch.no_grad():
        out, weights = mha(x, x, x, mask)
        expected = torch_mha_forward(built_in, x, x, x, mask)
    assert torch.allclose(out, expected[0], atol=1e-6)
    assert torch.allclose(weights, expected[1], atol=1e-6) and weights.shape == (2, 2, 5, 5)


def test_a_fully_masked_query_gets_zero_weights_and_w_os_bias():
    mha = seeded("multi_head_attention", MHA, 3)
    x, mask = inputs(4, blank=True)
    with torch.no_grad():
        out, weights = mha(x, x, x, mask)
    assert torch.equal(weights[0, :, 1], torch.zeros(2, 5))
    assert torch.allclose(out[0, 1], mha.W_o.bias)


def test_the_layer_standin_equals_the_built_in_layer():
    layer = seeded("encoder_layer", LAYER, 5)
    x, mask = inputs(6)
    built_in = torch_encoder_layer_from(layer.state_dict(), 8, 2, 16)
    with torch.no_grad():
        assert torch.allclose(layer(x, mask), torch_encoder_forward(built_in, x, mask), atol=1e-5)


def test_the_add_norm_and_feed_forward_standins_compute_the_contract():
    norm, ffn = seeded("add_norm", NORM, 7), seeded("feed_forward", FFN, 8)
    x, s = torch.randn(3, 8), torch.randn(3, 8)
    with torch.no_grad():
        assert torch.allclose(norm(x, s), norm.norm(x + s))
        hidden = torch.relu(x @ ffn.W_1.weight.T + ffn.W_1.bias)
        assert torch.allclose(ffn(x), hidden @ ffn.W_2.weight.T + ffn.W_2.bias, atol=1e-6)


def test_the_softmax_standin_is_stable_keeps_float32_and_zeroes_blank_slices():
    softmax = REGISTRY.function("softmax", lambda x, axis=-1: None)
    x = np.array([[1000.0, 1001.0], [-np.inf, -np.inf]], dtype=np.float32)
    got = softmax(x)
    assert got.dtype == np.float32
    assert np.allclose(got, [[0.26894142, 0.73105858], [0.0, 0.0]])
