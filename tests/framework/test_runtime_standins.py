"""Stand-ins (a course's file, runtime/shared/standin_registry.py): known-good modules the harness
sets into a learner's module, built in the worker from a file the harness sends as text. The
registry's refusals, the worker op that sets them, and the guard's exemption for calls that go
through them (and only them: the same stand-in used from another object is still recorded).
A toy stand-ins file here, made of nn.MultiheadAttention and nn.TransformerEncoderLayer (both
forbidden to this toy learner); this course's own stand-ins are proved in tests/reference."""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path

import pytest
import torch

from autograder.runtime import LearnerError, LearnerSession, Limits
from autograder.runtime.harness import failures
from autograder.runtime.shared import standin_registry
from autograder.runtime.shared.standin_registry import StandInError
from autograder.runtime.worker import guard

MHA_FORWARD = "torch.nn.functional.multi_head_attention_forward"
FORBIDDEN = ["torch.nn.MultiheadAttention", MHA_FORWARD, "torch.nn.TransformerEncoderLayer"]
MHA = {"d_model": 4, "num_heads": 2, "bias": True}
LAYER = {"d_model": 4, "num_heads": 2, "d_ff": 8, "eps": 1e-5}

STANDINS = """\
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, d_model, num_heads, bias):
        super().__init__()
        self.attention = nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True)

    def forward(self, query, key, value, mask=None):
        heads = self.attention.num_heads
        m = None if mask is None else ~mask.unsqueeze(1).expand(-1, heads, -1, -1).flatten(0, 1)
        return self.attention(query, key, value, attn_mask=m, average_attn_weights=False)


class Layer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model, num_heads, d_ff, dropout=0.0, layer_norm_eps=eps, batch_first=True
        )

    def forward(self, x, mask=None):
        heads = self.layer.self_attn.num_heads
        m = None if mask is None else ~mask.unsqueeze(1).expand(-1, heads, -1, -1).flatten(0, 1)
        return self.layer(x, src_mask=m)


KINDS = {
    "multi_head_attention": (Attention, {"d_model": "int", "num_heads": "int", "bias": "bool"}),
    "encoder_layer": (
        Layer, {"d_model": "int", "num_heads": "int", "d_ff": "int", "eps": "float"}
    ),
}
"""
REGISTRY = standin_registry.load(STANDINS)

WIRING = """\
import torch
from torch import nn

BORROWED = []


class Pass(nn.Module):
    def forward(self, x, mask=None):
        return x


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Pass()

    def forward(self, x, mask=None):
        BORROWED.append(self.attn)
        return self.attn(x, x, x, mask)[0]


class Borrower(nn.Module):
    def forward(self, x):
        return BORROWED[-1](x, x, x)[0]


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Pass(), Pass()])

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask)
        return x


def own_attention():
    return nn.MultiheadAttention(4, 2)
"""
BORROWER_LINE = WIRING.splitlines().index("        return BORROWED[-1](x, x, x)[0]") + 1
OWN_LINE = WIRING.splitlines().index("    return nn.MultiheadAttention(4, 2)") + 1


def seeded(kind: str, config: dict, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    module = REGISTRY.build(kind, config)
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(torch.randn_like(p) * (0.2 if "norm" in name else 0.5) + ("norm" in name))
    return module


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):
    package_dir = tmp_path_factory.mktemp("submission") / "toypkg"
    package_dir.mkdir()
    (package_dir / "__init__.py").write_text("")
    (package_dir / "wiring.py").write_text(textwrap.dedent(WIRING))
    made = LearnerSession(
        package_dir,
        package="toypkg",
        limits=Limits(test_timeout=30, import_timeout=30, memory_mb=2048),
        forbidden_apis=FORBIDDEN,
        standins=STANDINS,
    )
    try:
        yield made
    finally:
        made.close()


def mask_and_input():
    torch.manual_seed(3)
    mask = torch.rand(2, 5, 5) < 0.6
    mask[..., 0] = True  # every query keeps a key
    return torch.randn(2, 5, 4), mask


# -- the registry, in this process ---------------------------------------------------------


def test_wrong_kinds_and_settings_are_refused_with_a_sentence():
    with pytest.raises(StandInError, match="No stand-in kind is called 'softmax'"):
        REGISTRY.build("softmax", {})
    with pytest.raises(StandInError, match=r"expects the settings \['bias', 'd_model', 'num"):
        REGISTRY.build("multi_head_attention", {"d_model": 4})
    with pytest.raises(StandInError, match="num_heads must be a positive int; got True"):
        REGISTRY.build("multi_head_attention", {"d_model": 4, "num_heads": True, "bias": True})


def test_a_course_without_standins_says_so():
    with pytest.raises(StandInError, match="this course supplies no stand-ins"):
        standin_registry.StandInRegistry().build("encoder_layer", LAYER)


def test_a_file_whose_tables_are_wrong_is_refused_with_a_sentence():
    with pytest.raises(StandInError, match=r"KINDS\['x'\] must be \(factory, "):
        standin_registry.load("KINDS = {'x': (print, {'n': 'complex'})}\n", "bad")


def test_the_exempt_codes_are_the_forwards_of_the_files_modules():
    assert REGISTRY.forward_codes == {
        REGISTRY.kinds[kind][0].forward.__code__
        for kind in ("multi_head_attention", "encoder_layer")
    }


# -- the worker op and the guard ---------------------------------------------------------------


def test_calls_through_a_standin_the_harness_set_are_not_the_learners(session):
    wiring = session.module("wiring")
    block = wiring.Block()
    twin = seeded("multi_head_attention", MHA, 2)
    session.begin_test("through")
    session.set_standin(block, "attn", "multi_head_attention", MHA, twin.state_dict())
    x, mask = mask_and_input()
    got = block(x, mask)
    assert session.end_test().forbidden == ()
    assert torch.allclose(got, twin(x, x, x, mask)[0], atol=1e-6)
    grads = session.parameter_grads(block, x, mask, cotangent=torch.ones(2, 5, 4))
    assert sorted(grads) == sorted(f"attn.{name}" for name, _ in twin.named_parameters())
    assert all(g is not None and bool(g.abs().sum() > 0) for g in grads.values())
    assert session.forbidden_seen == ()


def test_the_same_standin_called_from_another_object_is_recorded(session):
    wiring = session.module("wiring")
    block = wiring.Block()
    twin = seeded("multi_head_attention", MHA, 4)
    session.set_standin(block, "attn", "multi_head_attention", MHA, twin.state_dict())
    x, mask = mask_and_input()
    block(x, mask)  # the learner keeps the stand-in in BORROWED
    session.begin_test("borrowed")
    wiring.Borrower()(x)
    # made inside the stand-in's nn.MultiheadAttention, which no learner call built: the points
    # rule tells it (test_nested_recorder.py)
    inside = "torch.nn.MultiheadAttention"
    assert session.end_test().forbidden == ((MHA_FORWARD, "wiring.py", BORROWER_LINE, inside),)
    session.begin_test("own")
    wiring.own_attention()
    assert session.end_test().forbidden == (("torch.nn.MultiheadAttention", "wiring.py", OWN_LINE),)


def test_a_standin_replaces_one_entry_of_a_module_list(session):
    stack = session.module("wiring").Stack()
    twin = seeded("encoder_layer", LAYER, 5)
    session.begin_test("stack")
    session.set_standin(stack, "layers.1", "encoder_layer", LAYER, twin.state_dict())
    x, mask = mask_and_input()
    got = stack(x, mask)
    assert session.end_test().forbidden == ()
    assert torch.allclose(got, twin(x, mask), atol=1e-5)
    assert len(stack.layers) == 2


def test_a_standin_only_replaces_a_part_the_learner_made(session):
    block = session.module("wiring").Block()
    state = seeded("multi_head_attention", MHA, 4).state_dict()
    with pytest.raises(LearnerError) as info:
        session.set_standin(block, "attention", "multi_head_attention", MHA, state)
    assert info.value.kind == "exception"
    assert "attention" in info.value.feedback
    stack = session.module("wiring").Stack()
    with pytest.raises(LearnerError):
        layer_state = seeded("encoder_layer", LAYER, 6).state_dict()
        session.set_standin(stack, "layers.2", "encoder_layer", LAYER, layer_state)
    assert len(stack.layers) == 2


def test_several_standins_are_set_in_one_request_in_order(session, monkeypatch):
    stack = session.module("wiring").Stack()
    twins = [seeded("encoder_layer", LAYER, 7), seeded("encoder_layer", LAYER, 8)]
    sent = []
    real = session._request_with_output

    def counting(request, **kwargs):
        sent.append(request["op"])
        return real(request, **kwargs)

    monkeypatch.setattr(session, "_request_with_output", counting)
    parts = [
        (f"layers.{i}", "encoder_layer", LAYER, twin.state_dict()) for i, twin in enumerate(twins)
    ]
    session.set_standins(stack, parts)
    monkeypatch.undo()
    assert sent == ["set_standins"]
    x, mask = mask_and_input()
    got = stack(x, mask)
    assert torch.allclose(got, twins[1](twins[0](x, mask), mask), atol=1e-5)
    assert not torch.allclose(got, twins[0](x, mask), atol=1e-3)


def test_the_first_part_that_fails_is_named_and_stops_the_rest(session):
    wiring = session.module("wiring")
    twin = seeded("multi_head_attention", MHA, 9)
    state = twin.state_dict()
    alone = wiring.Block()
    with pytest.raises(LearnerError) as single:
        session.set_standin(alone, "attention", "multi_head_attention", MHA, state)
    block = wiring.Block()
    parts = [
        ("attn", "multi_head_attention", MHA, state),
        ("attention", "multi_head_attention", MHA, state),
        ("attn", "nn.Linear", {}, {}),  # never reached: it would be a grader error
    ]
    with pytest.raises(LearnerError) as batched:
        session.set_standins(block, parts)
    assert batched.value.feedback == single.value.feedback
    assert "Block.attention" in batched.value.feedback
    x, mask = mask_and_input()
    assert torch.allclose(block(x, mask), twin(x, x, x, mask)[0], atol=1e-6)  # the first is set


def test_eval_after_the_standins_rides_in_the_same_request(session, monkeypatch):
    wiring = session.module("wiring")
    twin = seeded("multi_head_attention", MHA, 11)
    part = [("attn", "multi_head_attention", MHA, twin.state_dict())]
    block = wiring.Block()
    sent = []
    real = session._request_with_output

    def counting(request, **kwargs):
        sent.append(request["op"])
        return real(request, **kwargs)

    monkeypatch.setattr(session, "_request_with_output", counting)
    session.set_standins(block, part, then=[("eval", (), {})])
    monkeypatch.undo()
    assert sent == ["set_standins"]
    assert block.training is False and block.attn.training is False
    x, mask = mask_and_input()
    assert torch.allclose(block(x, mask), twin(x, x, x, mask)[0], atol=1e-6)
    failing = wiring.Block()  # a part that fails: eval() is not run, as before
    bad = [("attention", "multi_head_attention", MHA, twin.state_dict())]
    with pytest.raises(LearnerError) as info:
        session.set_standins(failing, bad, then=[("eval", (), {})])
    assert "Block.attention" in info.value.feedback and failing.training is True


def test_bad_requests_are_grader_errors_not_learner_failures(session):
    """The worker's traceback is not kept: it was sent the stand-ins file, whose text learner
    code could have written into it (harness/standin_custody.py)."""
    block = session.module("wiring").Block()
    with pytest.raises(RuntimeError, match="failed while running Setting Block.attn") as info:
        session.set_standin(block, "attn", "nn.Linear", {}, {})
    assert failures.HIDDEN_INTERNAL in str(info.value)
    assert "nn.Linear" not in str(info.value)
    with pytest.raises(RuntimeError, match="failed while running Setting Block.attn"):
        session.set_standin(block, "attn[0]", "multi_head_attention", MHA, {})


# -- the exemption rule, in-process on a fake library ------------------------------------------


@pytest.fixture
def fake(tmp_path: Path):
    lib = types.ModuleType("fakelib_for_standins")

    def attention(x):
        return x * 2

    lib.attention = attention
    sys.modules["fakelib_for_standins"] = lib

    class StandIn:
        def forward(self, x, callback=None):
            return lib.attention(x) if callback is None else callback(x)

    package_dir = tmp_path.resolve() / "root" / "toypkg"
    package_dir.mkdir(parents=True)
    source = (
        "import fakelib_for_standins as lib\n"
        "def call_part(part, x, callback=None):\n"
        "    return part.forward(x, callback)\n"
        "def sneaky(x):\n"
        "    return lib.attention(x)\n"
    )
    learner = types.ModuleType("toypkg_standins")
    exec(compile(source, str(package_dir / "layer.py"), "exec"), learner.__dict__)
    guard.install(["fakelib_for_standins.attention"], str(package_dir))
    yield types.SimpleNamespace(StandIn=StandIn, learner=learner)
    sys.modules.pop("fakelib_for_standins", None)
    guard.drain()


def test_the_exemption_covers_the_installed_standin_only_while_active(fake):
    part, other = fake.StandIn(), fake.StandIn()
    codes = {fake.StandIn.forward.__code__}
    with guard.exempting([part], codes):
        assert fake.learner.call_part(part, 1) == 2
        assert guard.drain() == []
        fake.learner.call_part(other, 1)  # a stand-in the harness did not install here
        assert guard.drain() == [("fakelib_for_standins.attention", "layer.py", 3)]
    fake.learner.call_part(part, 1)  # after the request
    assert guard.drain() == [("fakelib_for_standins.attention", "layer.py", 3)]


def test_learner_code_a_standin_reaches_is_still_recorded(fake):
    part = fake.StandIn()
    with guard.exempting([part], {fake.StandIn.forward.__code__}):
        fake.learner.call_part(part, 1, fake.learner.sneaky)
    assert guard.drain() == [("fakelib_for_standins.attention", "layer.py", 5)]
