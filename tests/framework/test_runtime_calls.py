"""A live LearnerSession on a toy package: calls, references, modules, state dicts and grads.
One worker serves the whole module."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.runtime import (
    CallResult,
    LearnerError,
    ParameterInfo,
    RemoteMethod,
    RemoteObject,
)
from tests.framework.calls_toy import calls_session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):
    yield from calls_session(tmp_path_factory.mktemp("submission"))


@pytest.fixture(scope="module")
def funcs(session):
    return session.module("funcs")


def test_values_go_in_and_come_back_as_fresh_copies(funcs):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = funcs.scale(x, factor=0.5)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, x * 0.5)
    t = torch.ones(2, dtype=torch.float64)
    assert torch.equal(funcs.scale(t), torch.full((2,), 2.0, dtype=torch.float64))
    assert funcs.nested() == {"a": [1, (2.5, None)], "b": np.float32(1.5), "c": (2, 3)}


def test_module_constants_can_be_fetched_without_calling(funcs):
    assert funcs.SETTINGS.fetch() == {"width": 4, "names": ("a", "b")}
    with pytest.raises(LearnerError) as info:
        funcs.NOT_THERE.fetch()
    assert info.value.feedback.startswith("submission/toypkg/funcs.py does not define NOT_THERE;")


def test_call_returns_the_arguments_after_the_call(funcs):
    x = np.ones(3)
    result = funcs.scale_in_place.call(x)
    assert isinstance(result, CallResult) and result.value is None
    np.testing.assert_array_equal(result.args[0], np.full(3, 3.0))
    np.testing.assert_array_equal(x, np.ones(3))  # the harness's copy is untouched
    untouched = funcs.scale.call(x, factor=np.float64(2.0))
    np.testing.assert_array_equal(untouched.args[0], x)
    assert untouched.kwargs == {"factor": 2.0}


def test_a_plain_call_brings_back_the_value_only(session, monkeypatch):
    funcs = session.module("funcs")
    model = session.module("layers").Scaler(3)
    sent = []
    request = session._request_with_output

    def keeping(message, **kwargs):
        response, output = request(message, **kwargs)
        sent.append((message["op"], message.get("args_back"), sorted(response)))
        return response, output

    monkeypatch.setattr(session, "_request_with_output", keeping)
    x = np.ones(3)
    np.testing.assert_array_equal(funcs.scale(x, factor=np.float64(3.0)), np.full(3, 3.0))
    out, extra = model(torch.ones(1, 3))
    assert model.eval() is model
    assert funcs.scale.call(x).args[0].tolist() == [1.0, 1.0, 1.0]
    assert [(op, back) for op, back, _ in sent] == [
        ("call", False),
        ("call", False),
        ("call", False),
        ("call", None),
    ]
    assert ["args" in keys for _, _, keys in sent] == [False, False, False, True]


def test_modules_stay_remote_and_their_state_dict_round_trips(session):
    Scaler = session.module("layers").Scaler
    model = Scaler(3)
    assert isinstance(model, RemoteObject)
    state = model.state_dict()
    assert list(state) == [
        "proj.weight",
        "proj.bias",
        "tied.weight",
        "tied.bias",
        "unused.weight",
        "unused.bias",
    ]
    new_state = {name: torch.full_like(value, 0.5) for name, value in state.items()}
    assert model.load_state_dict(new_state) == ([], [])
    assert torch.equal(model.proj.weight.detach(), torch.full((3, 3), 0.5))
    assert model.eval() is model and model.training is False
    out, extra = model(torch.ones(1, 3))
    assert extra == "extra"
    assert torch.allclose(out, torch.full((1, 3), 4.0))


def test_a_method_call_is_one_request_and_means_read_then_call(session, monkeypatch):
    model = session.module("layers").Scaler(3)
    sent = []
    request = session._request_with_output

    def counting(message, **kwargs):
        sent.append(message["op"])
        return request(message, **kwargs)

    monkeypatch.setattr(session, "_request_with_output", counting)
    method = model.eval
    assert isinstance(method, RemoteMethod) and sent == []  # reading it asks nothing
    assert method() is model and sent == ["call"]
    assert isinstance(method.fetch(), RemoteObject) and sent == ["call", "getattr"]
    assert model.training is False  # not a function of the class: read from the worker
    shadowed = session.module("layers").Shadowed()
    assert shadowed.eval() == "the instance's own eval"  # what obj.eval() does in Python
    assert shadowed.width == 2  # a property is read, never called


def test_containers_support_len_and_indexing(session):
    stack = session.module("layers").Stack(3)
    layers = stack.layers
    assert len(layers) == 3 and layers.__len__() == 3
    second = layers[1]
    assert isinstance(second, RemoteObject) and layers.__getitem__(1) is second
    assert [p.name for p in session.parameters(second)] == ["weight", "bias"]
    with pytest.raises(LearnerError) as info:
        layers[7]
    assert info.value.is_instance("IndexError")
    assert info.value.feedback.startswith("ModuleList.__getitem__(...) raised IndexError")
    with pytest.raises(TypeError, match="range"):
        list(layers)


def test_parameter_grads_backpropagate_the_cotangent(session):
    model = session.module("layers").Scaler(2)
    x = torch.tensor([[1.0, 2.0]])
    grads = session.parameter_grads(model, x, cotangent=torch.tensor([[1.0, 10.0]]))
    assert set(grads) == {"proj.weight", "proj.bias", "unused.weight", "unused.bias"}
    expected_weight = 2 * torch.tensor([[1.0], [10.0]]) * x  # d(2 (W x + b) . g)/dW
    assert torch.allclose(grads["proj.weight"], expected_weight)
    assert torch.allclose(grads["proj.bias"], torch.tensor([2.0, 20.0]))
    assert grads["unused.weight"] is None and grads["unused.bias"] is None
    with pytest.raises(LearnerError) as info:
        session.parameter_grads(model, x, cotangent=torch.ones(3))
    assert info.value.kind == "bad_return" and "shape (1, 2)" in info.value.feedback


def test_parameter_grads_explain_an_output_cut_from_the_parameters(session):
    model = session.module("layers").Detached()
    with pytest.raises(LearnerError) as info:
        session.parameter_grads(model, torch.ones(1, 2), cotangent=torch.ones(1, 2))
    assert info.value.kind == "bad_return"
    assert info.value.feedback.startswith(
        "Detached.forward(...) returned a tensor that does not depend on the module's parameters"
    )


def test_parameters_expose_shared_storage(session):
    model = session.module("layers").Scaler(4)
    params = session.parameters(model)
    assert [p.name for p in params] == [
        "proj.weight",
        "proj.bias",
        "tied.weight",
        "tied.bias",
        "unused.weight",
        "unused.bias",
    ]
    assert all(isinstance(p, ParameterInfo) for p in params)
    by_name = {p.name: p for p in params}
    assert by_name["proj.weight"].shape == (4, 4) and by_name["proj.weight"].dtype == torch.float32
    assert by_name["proj.weight"].storage == by_name["tied.weight"].storage
    assert by_name["proj.weight"].storage != by_name["unused.weight"].storage
