"""LearnerSession.build and .chain: a constructor call and method calls on its result in one
request (ops.op_chain). Each case runs the grader's three separate calls and the fused request
on the same toy class and checks that the learner sees the same thing: the same module state,
the same printed output, and for a failing step the same error (kind, feedback, line), also
when the step runs out of time or kills the worker."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from autograder.runtime import LearnerError, LearnerSession, Limits, RemoteObject

TOY = """
    import os
    import time

    import torch
    from torch import nn


    class Scaler(nn.Module):
        def __init__(self, width, factor=1.0):
            super().__init__()
            print(f"Scaler({width}) built")
            self.proj = nn.Linear(width, width, bias=False)
            self.factor = factor

        def forward(self, x):
            return self.proj(x) * self.factor


    class BadInit(nn.Module):
        def __init__(self, width):
            super().__init__()
            raise ValueError(f"width {width} is not supported")


    class BadLoad(Scaler):
        def load_state_dict(self, state, strict=True):
            raise KeyError("weights")


    class Sleeper(Scaler):
        def eval(self):
            time.sleep(30)


    class Dies(Scaler):
        def eval(self):
            os._exit(3)


    class Talks(Scaler):
        def eval(self):
            print("eval called")
            return super().eval()


    class Forges(Scaler):
        def eval(self):  # a progress frame of its own on the channel (a fresh worker's fd)
            import pickle
            import struct
            import sys

            frame = pickle.dumps({"progress": 1, "type": "X"})
            os.write(int(sys.argv[1]), struct.pack("!i", len(frame)) + frame)
            time.sleep(30)


    class Plain(nn.Module):
        eval = 5  # not a function: obj.eval reads it, then the grader calls an int
"""


@pytest.fixture
def session(tmp_path: Path):
    package = tmp_path / "toypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "layers.py").write_text(textwrap.dedent(TOY))
    made = LearnerSession(
        package,
        package="toypkg",
        limits=Limits(test_timeout=1.0, import_timeout=20, memory_mb=2048, hang_strikes=2),
        display_dir="assignments/toypkg",
    )
    try:
        yield made
    finally:
        made.close()


def count_requests(session: LearnerSession, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    sent: list[str] = []
    request = session._request_with_output

    def counting(message, **kwargs):
        sent.append(message.get("op", "?"))
        return request(message, **kwargs)

    monkeypatch.setattr(session, "_request_with_output", counting)
    return sent


def separately(cls, *args, state=None):
    """What a grader wrote before build: three calls, one request each."""
    m = cls(*args)
    if state is not None:
        m.load_state_dict(state)
    m.eval()
    return m


def error_of(call) -> LearnerError:
    with pytest.raises(LearnerError) as info:
        call()
    return info.value


def same_error(a: LearnerError, b: LearnerError) -> None:
    fields = ("kind", "feedback", "exc_type", "message", "location", "traceback")
    assert {f: getattr(a, f) for f in fields} == {f: getattr(b, f) for f in fields}


def test_build_is_one_request_and_leaves_the_module_as_the_three_calls_do(session, monkeypatch):
    layers = session.module("layers")
    state = {"proj.weight": torch.arange(9.0).reshape(3, 3)}
    layers.Scaler(3)  # imports the module first
    sent = count_requests(session, monkeypatch)
    m = layers.Scaler.build(3, state=state)
    assert sent == ["chain"]
    old = separately(layers.Scaler, 3, state=state)
    assert sent == ["chain", "call", "call", "call"]
    assert isinstance(m, RemoteObject) and m.training is False and old.training is False
    x = torch.ones(2, 3)
    assert torch.equal(m(x), torch.tensor([[3.0, 12.0, 21.0]] * 2))
    assert torch.equal(m(x), old(x))
    assert session.build(layers.Scaler, 3).training is False  # the session's own spelling


def test_chain_returns_each_steps_value(session, monkeypatch):
    m = session.module("layers").Scaler(2)
    sent = count_requests(session, monkeypatch)
    state = {"proj.weight": torch.eye(2) * 2}
    loaded, evaluated = session.chain(m, [("load_state_dict", (state,), {}), ("eval", (), {})])
    assert sent == ["chain"]
    assert tuple(loaded) == ([], []) and evaluated is m
    assert torch.equal(m(torch.ones(1, 2)), torch.full((1, 2), 2.0))


def test_the_output_of_every_step_is_the_tests(session):
    layers = session.module("layers")
    traces = []
    for make in (lambda: separately(layers.Talks, 2), lambda: layers.Talks.build(2)):
        session.begin_test("t")
        make()
        traces.append(session.end_test().output)
    assert traces[0] == traces[1] == "Scaler(2) built\neval called\n"


def test_a_failing_constructor_reads_as_before(session):
    layers = session.module("layers")
    before = error_of(lambda: separately(layers.BadInit, 4))
    after = error_of(lambda: layers.BadInit.build(4))
    same_error(before, after)
    assert "BadInit(...)" in after.feedback and "width 4 is not supported" in after.feedback
    assert after.location.startswith("assignments/toypkg/layers.py:")


def test_a_failing_later_step_names_that_step_and_its_line(session):
    layers = session.module("layers")
    state = {"proj.weight": torch.zeros(2, 2)}
    before = error_of(lambda: separately(layers.BadLoad, 2, state=state))
    after = error_of(lambda: layers.BadLoad.build(2, state=state))
    same_error(before, after)
    assert "BadLoad.load_state_dict(...)" in after.feedback
    assert (
        after.location.startswith("assignments/toypkg/layers.py:") and after.exc_type == "KeyError"
    )
    wrong = {"nothing": torch.zeros(1)}  # torch's own strict check fails in the same step
    same_error(
        error_of(lambda: separately(layers.Scaler, 2, state=wrong)),
        error_of(lambda: layers.Scaler.build(2, state=wrong)),
    )


def test_a_step_out_of_time_is_named_and_struck_as_before(session, monkeypatch):
    layers = session.module("layers")
    before = error_of(lambda: separately(layers.Sleeper, 2))
    after = error_of(lambda: layers.Sleeper.build(2))
    same_error(before, after)
    assert after.kind == "timeout" and "Sleeper.eval(...)" in after.feedback
    assert session._channel.strikes.labels_out() == ["Sleeper.eval(...)"]
    assert session._channel.strikes.count("Sleeper.eval(...)") == 2
    # Struck out twice: the worker stops before eval and the harness refuses it at once.
    sent = count_requests(session, monkeypatch)
    third = error_of(lambda: layers.Sleeper.build(2))
    assert sent[-1] == "chain" and "call" not in sent  # (a fresh worker imports first)
    assert third.kind == "timeout" and "Sleeper.eval(...)" in third.feedback
    same_error(error_of(lambda: separately(layers.Sleeper, 2)), third)


def test_a_step_that_kills_the_worker_is_named_as_before(session):
    layers = session.module("layers")
    before = error_of(lambda: separately(layers.Dies, 2))
    after = error_of(lambda: layers.Dies.build(2))
    same_error(before, after)
    assert after.kind == "crash" and "Dies.eval(...)" in after.feedback


def test_a_step_that_is_no_method_is_left_to_the_harness(session, monkeypatch):
    plain = session.module("layers").Plain
    plain()
    sent = count_requests(session, monkeypatch)
    with pytest.raises(TypeError, match="'int' object is not callable"):
        plain.build()
    assert sent == ["chain", "getattr"]  # built and returned, then eval read and called here


def test_a_progress_frame_forged_by_learner_code_stops_the_worker(session):
    """The worker's own frame announced part 1 (eval); one more for part 1 is no progress, so
    it is read as the answer: garbled, and the worker is stopped at once (no waiting out the
    time budget), naming the step that ran."""
    error = error_of(lambda: session.module("layers").Forges.build(2))
    assert error.kind == "crash" and "Forges.eval(...)" in error.feedback
    assert "sent back" in error.feedback
    assert session._channel.worker is None and session._channel.strikes.labels_out() == []
    assert session._channel.strikes.count("Forges.eval(...)") == 0
