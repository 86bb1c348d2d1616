"""A live LearnerSession on a toy package: calls, references, modules, grads, errors, output,
environment and the forbidden-API guard. One worker serves the whole module."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from autograder.runtime import (
    CallResult,
    LearnerError,
    LearnerSession,
    Limits,
    ParameterInfo,
    RemoteMethod,
    RemoteObject,
)

FORBIDDEN = [
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.NoSuchLayerInThisVersion",
]
COURSE_MESSAGE = "The course asks you to build this yourself; {api} is not allowed."
CANARY = "AUTOGRADER_TEST_CANARY"

TOY = {
    # The package's __init__ fails (it imports a broken module); the others still import.
    "__init__.py": "from .broken_syntax import nothing\n",
    "broken_syntax.py": """\
        import numpy as np

        def f(x:
            return x
        """,
    "funcs.py": """\
        import os
        import sys

        import numpy as np


        def scale(x, factor=2.0):
            return x * factor


        def scale_in_place(x):
            x *= 3
            return None


        def todo(x):
            raise NotImplementedError("softmax is part of the assignment")


        def deep_failure(a, b):
            return _inner(a, b)


        def _inner(a, b):
            return a @ b


        def chatty(x):
            print("hello from the learner")
            print("to stderr", file=sys.stderr)
            os.write(1, b"raw fd write\\n")
            sys.stdout = open(os.devnull, "w")  # must not break the next calls
            return x + 1


        def environment():
            flags = (sys.flags.hash_randomization, sys.flags.no_user_site, sys.flags.safe_path)
            return dict(os.environ), os.getcwd(), flags, list(sys.path)


        def limits():
            import resource
            import signal
            return {
                "as": resource.getrlimit(resource.RLIMIT_AS),
                "core": resource.getrlimit(resource.RLIMIT_CORE),
                "fsize": resource.getrlimit(resource.RLIMIT_FSIZE),
                "sigxfsz_ignored": signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN,
                "session_leader": os.getsid(0) == os.getpid() == os.getpgid(0),
                "stdin": os.read(0, 10),
            }


        def shout():
            raise ValueError("\x1b[31mred alert\x1b[0m " + "x" * 3000)


        def forge_answer():
            import struct
            channel = int(sys.argv[1])
            os.write(channel, struct.pack("!i", 5) + b"hello")
            return 1


        def object_array():
            return np.array([1, "a"], dtype=object)


        def returns_function():
            return scale


        def nested():
            return {"a": [1, (2.5, None)], "b": np.float32(1.5), "c": torch_size()}


        def torch_size():
            import torch
            return torch.zeros(2, 3).shape


        SETTINGS = {"width": 4, "names": ("a", "b")}
        """,
    "composite.py": """\
        from toypkg.layers import uses_mha


        def build(width):
            return uses_mha(width)
        """,
    "layers.py": """\
        import torch
        from torch import nn
        import torch.nn.functional as F


        class Scaler(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.proj = nn.Linear(width, width)
                self.tied = self.proj  # the same parameters under a second name
                self.unused = nn.Linear(width, 1)

            def forward(self, x):
                return self.proj(x) * 2, "extra"


        def uses_sdpa(q, k, v):
            return F.scaled_dot_product_attention(q, k, v)


        def uses_mha(width):
            return nn.MultiheadAttention(width, 1)


        class Stack(nn.Module):
            def __init__(self, depth):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(depth)])


        class Shadowed(nn.Module):
            def __init__(self):
                super().__init__()
                self.eval = lambda: "the instance's own eval"  # hides nn.Module.eval

            @property
            def width(self):
                return 2


        class Detached(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(2, 2)

            def forward(self, x):
                return self.proj(x).detach()
        """,
}


def write_package(root: Path, files: dict[str, str]) -> Path:
    package_dir = root / "toypkg"
    package_dir.mkdir(parents=True)
    for name, source in files.items():
        (package_dir / name).write_text(textwrap.dedent(source))
    return package_dir


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):
    package_dir = write_package(tmp_path_factory.mktemp("submission"), TOY)
    os.environ[CANARY] = "secret-value"
    made = LearnerSession(
        package_dir,
        package="toypkg",
        limits=Limits(test_timeout=20, import_timeout=20, memory_mb=2048, output_kb=1),
        forbidden_apis=FORBIDDEN,
        forbidden_message=COURSE_MESSAGE,
        display_dir="submission/toypkg",
        forbidden_raises=True,
    )
    try:
        yield made
    finally:
        made.close()
        os.environ.pop(CANARY, None)


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


def test_not_implemented_is_its_own_kind(funcs):
    with pytest.raises(LearnerError) as info:
        funcs.todo(1)
    error = info.value
    assert error.kind == "not_implemented"
    assert error.location == "submission/toypkg/funcs.py:17 in todo"
    assert error.feedback.startswith(
        "todo(...) is not implemented yet: it raised "
        "NotImplementedError at submission/toypkg/funcs.py:17 in todo."
    )


def test_exceptions_carry_only_learner_frames(funcs):
    with pytest.raises(LearnerError) as info:
        funcs.deep_failure(torch.ones(2, 3), torch.ones(2, 3))
    error = info.value
    assert error.kind == "exception" and error.is_instance("RuntimeError")
    assert error.location == "submission/toypkg/funcs.py:25 in _inner"
    lines = error.traceback.splitlines()
    assert lines[0] == '  File "submission/toypkg/funcs.py", line 21, in deep_failure'
    assert lines[2] == '  File "submission/toypkg/funcs.py", line 25, in _inner'
    assert "autograder" not in error.traceback and "/tmp" not in error.traceback
    assert error.feedback.startswith(
        "deep_failure(...) raised RuntimeError at "
        "submission/toypkg/funcs.py:25 in _inner: mat1 and mat2 shapes"
    )
    assert "tensor(" not in error.feedback  # never the grader's argument values


def test_exception_messages_are_sanitized_and_capped(funcs):
    with pytest.raises(LearnerError) as info:
        funcs.shout()
    message = info.value.message
    assert message.startswith("red alert xxx") and "\x1b" not in info.value.feedback
    assert len(message) < 2100 and message.endswith("[... 1010 more characters]")


def test_syntax_errors_name_file_and_line_and_spare_other_modules(session, funcs):
    assert funcs.scale(1) == 2.0
    with pytest.raises(LearnerError) as info:
        session.module("broken_syntax").f(1)
    error = info.value
    assert error.kind == "syntax_error"
    assert error.location == "submission/toypkg/broken_syntax.py:3"
    assert error.feedback.startswith(
        "submission/toypkg/broken_syntax.py has a syntax error at line 3"
    )
    with pytest.raises(LearnerError) as again:
        session.module("broken_syntax").g()
    assert again.value is error  # remembered, not re-imported
    init_error = session.package_init_error
    assert init_error is not None and init_error.kind == "syntax_error"


def test_missing_modules_and_names_say_what_was_expected(session, funcs):
    with pytest.raises(LearnerError) as info:
        session.module("softmax").softmax(np.ones(2))
    assert info.value.kind == "import_error"
    assert info.value.feedback == (
        "Could not find submission/toypkg/softmax.py in your submission; the assignment "
        "expects that file at that path in your repository."
    )
    with pytest.raises(LearnerError) as info:
        funcs.softmax(np.ones(2))
    assert info.value.feedback.startswith("submission/toypkg/funcs.py does not define softmax;")


def test_values_that_cannot_cross_are_bad_returns_and_objects_become_refs(funcs):
    with pytest.raises(LearnerError) as info:
        funcs.object_array()
    assert info.value.kind == "bad_return"
    assert info.value.feedback == (
        "object_array(...) returned a value the grader cannot read: a numpy array of dtype "
        "object cannot be checked (return a numeric array, e.g. float64)."
    )
    remote_scale = funcs.returns_function()
    assert isinstance(remote_scale, RemoteObject)
    assert remote_scale(np.float64(2.0), factor=3.0) == 6.0


def test_output_is_captured_and_never_corrupts_the_protocol(session, funcs):
    session.begin_test("output")
    result = funcs.chatty.call(1)
    assert result.value == 2
    assert "hello from the learner\n" in result.output
    assert "to stderr\n" in result.output and "raw fd write\n" in result.output
    assert funcs.scale(2) == 4.0
    trace = session.end_test()
    assert "hello from the learner" in trace.output and not trace.timed_out


def test_output_is_capped_per_test(session, funcs):
    session.begin_test("output cap")
    for _ in range(60):
        funcs.chatty(1)  # ~50 bytes each, limit output_kb=1
    trace = session.end_test()
    assert 1024 <= len(trace.output) < 1200
    assert trace.output.endswith("[... output of this test truncated]\n")


def test_the_worker_sees_only_the_allow_listed_environment(funcs):
    env, cwd, (hash_randomization, no_user_site, safe_path), path = funcs.environment()
    assert CANARY not in env and os.environ[CANARY] == "secret-value"
    assert env["HOME"] == env["TMPDIR"] == cwd
    assert Path(cwd, "toypkg", "funcs.py").is_file()  # the private copy
    assert env["OMP_NUM_THREADS"] == "1" and env["LC_ALL"] == "C.UTF-8"
    assert hash_randomization == 0 and no_user_site and safe_path
    assert path[0] == cwd and os.getcwd() not in path


def test_the_worker_runs_under_its_rlimits_in_its_own_session(funcs):
    got = funcs.limits()
    assert got["as"] == (2048 * 2**20, 2048 * 2**20)
    assert got["core"] == (0, 0)
    assert got["fsize"] == (64 * 2**20, 64 * 2**20)
    assert got["sigxfsz_ignored"] and got["session_leader"]
    assert got["stdin"] == b""


def test_forbidden_apis_are_reported_with_the_learner_file_and_line(session):
    layers = session.module("layers")
    q = torch.ones(1, 2, 4)
    session.begin_test("forbidden")
    with pytest.raises(LearnerError) as info:
        layers.uses_sdpa(q, q, q)
    error = info.value
    api = "torch.nn.functional.scaled_dot_product_attention"
    assert error.kind == "forbidden"
    assert error.forbidden == ((api, "layers.py", 18),)
    assert error.feedback == (
        f"The course asks you to build this yourself; {api} is not allowed. "
        "It was called at submission/toypkg/layers.py:18."
    )
    with pytest.raises(LearnerError) as info:
        layers.uses_mha(4)
    assert info.value.forbidden == (("torch.nn.MultiheadAttention", "layers.py", 22),)
    trace = session.end_test()
    assert trace.forbidden == (
        (api, "layers.py", 18),
        ("torch.nn.MultiheadAttention", "layers.py", 22),
    )
    assert (api, "layers.py", 18) in session.forbidden_seen
    assert layers.Scaler(2) is not None  # nn.Linear is allowed: nothing recorded


def test_forbidden_calls_made_in_another_file_are_recorded_but_do_not_fail_the_call(session):
    session.begin_test("forbidden elsewhere")
    mha = session.module("composite").build(4)  # composite.py -> layers.py:22
    assert isinstance(mha, RemoteObject)
    assert session.end_test().forbidden == (("torch.nn.MultiheadAttention", "layers.py", 22),)


def test_by_default_forbidden_calls_are_only_recorded(session):
    session.forbidden_raises = False
    try:
        session.begin_test("record only")
        q = torch.ones(1, 2, 4)
        got = session.module("layers").uses_sdpa(q, q, q)
        assert torch.allclose(got, q)
        api = "torch.nn.functional.scaled_dot_product_attention"
        assert session.end_test().forbidden == ((api, "layers.py", 18),)
    finally:
        session.forbidden_raises = True


def test_remote_objects_refuse_local_attribute_writes(session):
    model = session.module("layers").Scaler(2)
    with pytest.raises(AttributeError, match="lives in the learner's process"):
        model.proj = None
    with pytest.raises(AttributeError):
        model.__array__  # noqa: B018  (dunder lookups never reach the worker)


def test_a_forged_answer_on_the_channel_stops_the_worker(session, funcs):
    """Runs last: it kills the module's worker."""
    with pytest.raises(LearnerError) as info:
        funcs.forge_answer()
    assert info.value.kind == "crash"
    assert info.value.feedback.startswith("The process running forge_answer(...) sent back")
    assert session._channel.worker is None
