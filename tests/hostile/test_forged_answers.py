"""Learner code that writes whole answers to the worker's channel in the middle of a call.

The worker's own answer follows the forged one; the harness must not take the forged frame for
the answer (a forged ``internal`` became a grader error) nor read every later answer as the one
to the request before it (one forged frame in MultiHeadAttention.load_state_dict failed the
feed-forward, Add & Norm and encoder tests too, with 21 grader errors).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from autograder.runtime import LearnerError, LearnerSession, Limits

TOY = """
import gc
import pickle
from multiprocessing.connection import Connection

import torch
from torch import nn


def channel():
    return next(o for o in gc.get_objects() if isinstance(o, Connection))


class Forger(nn.Module):
    answer = None  # the frame load_state_dict writes before doing its work

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 2)

    def forward(self, x):
        return x * 2

    def load_state_dict(self, state, strict=True):
        channel().send_bytes(pickle.dumps(self.answer))
        return super().load_state_dict(state, strict)


class ForgesInternal(Forger):
    answer = {"ok": False, "internal": "forged"}


class ForgesSuccess(Forger):
    answer = {"ok": True, "value": [None, None], "forbidden": []}


def double(x):
    return x * 2
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
        limits=Limits(test_timeout=5.0, import_timeout=20, memory_mb=2048),
        display_dir="assignments/toypkg",
    )
    try:
        yield made
    finally:
        made.close()


@pytest.mark.parametrize("forger", ["ForgesInternal", "ForgesSuccess"])
@pytest.mark.parametrize("fused", [True, False], ids=["build", "separate-calls"])
def test_a_forged_answer_is_garbled_and_later_calls_get_their_own_answers(session, forger, fused):
    layers = session.module("layers")
    state = {"proj.weight": torch.eye(2), "proj.bias": torch.zeros(2)}
    with pytest.raises(LearnerError) as info:  # never RuntimeError (a grader error)
        if fused:
            getattr(layers, forger).build(state=state)
        else:
            getattr(layers, forger)().load_state_dict(state)
    assert info.value.kind == "crash"
    assert "sent back something that is not an answer" in info.value.feedback
    assert f"{forger}.load_state_dict(...)" in info.value.feedback
    assert session._channel.worker is None  # stopped at once: its real answer is never read
    x = torch.tensor([1.0, -3.0])
    assert torch.equal(layers.double(x), x * 2)  # a fresh worker, its own answer
    assert torch.equal(layers.double(x + 1), (x + 1) * 2)


#: A module that makes every later answer of its worker a frame of a few kilobytes whose lists
#: share their items: walked as a tree, 10**12 items (hours of the harness's time).
SHARES = """
import pickle

_real_dumps = pickle.dumps
_level = [0] * 1000
for _ in range(3):
    _level = [_level] * 1000


def _dumps(obj, *args, **kwargs):
    return _real_dumps(_level, *args, **kwargs)


def start():
    pickle.dumps = _dumps


def double(x):
    return x * 2
"""


def test_an_answer_whose_parts_are_shared_is_refused_at_once_as_larger_than_its_frame(tmp_path):
    package = tmp_path / "sharepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "shares.py").write_text(textwrap.dedent(SHARES))
    session = LearnerSession(
        package,
        package="sharepkg",
        limits=Limits(test_timeout=5.0, import_timeout=20, memory_mb=2048),
        display_dir="assignments/sharepkg",
    )
    try:
        shares = session.module("shares")
        with pytest.raises(LearnerError) as info:
            shares.start()  # its own answer is the first forged one
        assert info.value.kind == "crash"
        assert "start(...) sent back an answer that is larger than its" in info.value.feedback
        assert "bytes can hold" in info.value.feedback
        assert session._channel.worker is None  # stopped: nothing more of it is read
        call = info.value.feedback.removeprefix("The process running ").split(" sent back")[0]
        assert session._channel.strikes.count(call) == 0  # neither a time-out nor a crash
        x = torch.tensor([1.0, -3.0])
        assert torch.equal(shares.double(x), x * 2)  # a fresh worker, its own answer
    finally:
        session.close()
