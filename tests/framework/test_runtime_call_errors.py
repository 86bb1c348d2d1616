"""A live LearnerSession on a toy package, when things go wrong: learner exceptions, syntax
errors, missing names, values that cannot cross, output, the environment, rlimits, forbidden
APIs and a forged answer. One worker serves the whole module."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from autograder.runtime import (
    LearnerError,
    RemoteObject,
)
from tests.framework.calls_toy import CANARY, calls_session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):
    yield from calls_session(tmp_path_factory.mktemp("submission"))


@pytest.fixture(scope="module")
def funcs(session):
    return session.module("funcs")


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
