"""A learner module whose ``named_parameters`` lies (hostile tester's finding).

An EncoderLayer whose ``named_parameters(remove_duplicate=False)`` returned fresh copies made
one layer object shared by every layer of an Encoder read as separate layers: the shared-layer
mistake lost no points. The worker now reads the parameters as torch registered them
(runtime/worker/module_tree.py), calling no method of the learner's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from autograder.runtime.worker import module_tree

from .toy_session import toy_module

TOY = """
from torch import nn

_KEEP = []


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        pairs = list(super().named_parameters(prefix, recurse, remove_duplicate))
        copies = [(n, nn.Parameter(p.detach().clone())) for n, p in pairs]
        _KEEP.append(copies)
        return iter(copies)

    def _named_members(self, *args, **kwargs):
        return iter([])

    def forward(self, x):
        return self.proj(x)


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        layer = Layer()
        self.layers = nn.ModuleList([layer, layer])

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return iter([("layers.0.proj.weight", nn.Parameter(torch.zeros(1)))])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
"""


@pytest.fixture
def layers(tmp_path: Path):
    with toy_module(tmp_path, "import torch\n" + TOY) as module:
        yield module._session, module


def test_a_shared_layer_reads_as_shared_whatever_named_parameters_returns(layers):
    session, module = layers
    infos = session.parameters(module.Stack())
    assert [info.name for info in infos] == [
        "layers.0.proj.weight",
        "layers.0.proj.bias",
        "layers.1.proj.weight",
        "layers.1.proj.bias",
    ]
    first, second = infos[:2], infos[2:]
    assert [a.storage for a in first] == [b.storage for b in second]  # one layer, twice


def test_gradients_are_read_from_the_registered_parameters(layers):
    session, module = layers
    grads = session.parameter_grads(module.Layer(), torch.ones(2, 3), cotangent=torch.ones(2, 3))
    assert set(grads) == {"proj.weight", "proj.bias"}
    assert torch.equal(grads["proj.bias"], torch.full((3,), 2.0))


class _Block(nn.Module):
    def __init__(self, shared: nn.Module) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.shared = shared
        self.register_parameter("absent", None)
        self.scale = nn.Parameter(torch.ones(1))


def _models() -> list[nn.Module]:
    shared = nn.Linear(4, 4)
    tied = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    tied.add_module("again", tied[0])
    return [
        nn.Sequential(_Block(shared), _Block(shared), nn.Linear(4, 2, bias=False)),
        nn.TransformerEncoderLayer(8, 2, 16),
        tied,
        nn.ModuleList([nn.ModuleDict({"a": nn.Linear(2, 2)}), nn.Identity()]),
    ]


@pytest.mark.parametrize("remove_duplicate", [True, False])
@pytest.mark.parametrize("model", _models(), ids=["shared", "torch_layer", "tied", "containers"])
def test_the_walk_gives_torchs_own_names_order_and_objects(model, remove_duplicate):
    want = list(model.named_parameters(remove_duplicate=remove_duplicate))
    got = module_tree.named_parameters(model, remove_duplicate=remove_duplicate)
    assert [name for name, _ in got] == [name for name, _ in want]
    assert all(a is b for (_, a), (_, b) in zip(got, want, strict=True))


def test_a_module_that_holds_itself_is_cut_off_not_walked_forever():
    loop = nn.Sequential(nn.Linear(1, 1))
    loop.add_module("me", loop)
    assert [n for n, _ in module_tree.named_parameters(loop)] == ["0.weight", "0.bias"]
    with pytest.raises(module_tree.TreeTooLarge):
        module_tree.named_parameters(loop, remove_duplicate=False)
