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

from autograder.feedback import hidden_context
from autograder.runtime import LearnerError, LearnerSession, Limits
from autograder.runtime.harness import failures
from autograder.runtime.harness.part_labels import ChainLabels
from autograder.runtime.shared import messages

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


def toy_session(tmp_path: Path, name: str, module: str, source: str) -> LearnerSession:
    """A session on package ``name`` holding ``module`` with ``source``."""
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / f"{module}.py").write_text(textwrap.dedent(source))
    return LearnerSession(
        package,
        package=name,
        limits=Limits(test_timeout=5.0, import_timeout=20, memory_mb=2048),
        display_dir=f"assignments/{name}",
    )


@pytest.fixture
def session(tmp_path: Path):
    made = toy_session(tmp_path, "toypkg", "layers", TOY)
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
    session = toy_session(tmp_path, "sharepkg", "shares", SHARES)
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


#: A module whose every error answer after ``start()`` carries the call's input in each text
#: field (the exception's message copied into feedback, location, traceback, a forged kind and
#: type), as learner code that replaced ``pickle.dumps`` in the worker could write.
FORGES_ERRORS = """
import pickle

_real_dumps = pickle.dumps


def _dumps(obj, *args, **kwargs):
    error = obj.get("error") if isinstance(obj, dict) else None
    if isinstance(error, dict):
        leak = "LEAK " + str(error.get("message"))
        error.update(feedback=leak, location=leak, traceback=leak, reason=leak)
        error.update(kind="tampered", exc_type="LEAK", exc_mro=["LEAK", "ValueError"])
        error.update(memory_mb=leak, disk_mb=leak, type=leak, part=0)
    return _real_dumps(obj, *args, **kwargs)


def start():
    pickle.dumps = _dumps


def check(x):
    raise ValueError(f"x={x.tolist()}")
"""


def test_a_hidden_tests_sentence_holds_no_text_of_a_forged_error_answer(tmp_path):
    session = toy_session(tmp_path, "forgepkg", "forges", FORGES_ERRORS)
    try:
        forges = session.module("forges")
        forges.start()
        with hidden_context(True), pytest.raises(LearnerError) as hidden:
            forges.check(torch.tensor([796.25, -3.5]))
        with pytest.raises(LearnerError) as visible:
            forges.check(torch.tensor([1.0]))
    finally:
        session.close()
    error = hidden.value
    assert error.kind == "exception"  # a kind outside the worker's own is not taken
    assert error.feedback == messages.EXCEPTION_HIDDEN.format(
        call="check(...)",
        exc_type=messages.OWN_EXCEPTION_CLASS.format(base="ValueError"),
        where="",
    )
    assert (error.location, error.traceback) == ("", "")
    assert "796.25" in error.message  # kept for graders, which never show it in a hidden test
    assert visible.value.feedback == "LEAK x=[1.0]"  # a visible test may show the learner's text


@pytest.mark.parametrize(
    ("error", "sentence"),
    [
        ({"kind": "memory", "memory_mb": "LEAK"}, "(the limit is 2048 MB)"),
        ({"kind": "disk", "disk_mb": "LEAK"}, "write 64 MiB to disk"),
        ({"kind": "bad_return", "reason": "LEAK shape (7, 9)"}, "a hidden test says no more"),
        ({"kind": "bad_return", "feedback_template": "NOT_AN_OBJECT", "reason": "LEAK"}, "gave"),
        ({"kind": "import_error", "exc_type": "ValueError", "feedback": "LEAK"}, "Importing"),
        ({"kind": "syntax_error", "message": "LEAK", "location": "LEAK:3"}, "Importing"),
    ],
    ids=["memory", "disk", "bad_return", "not_an_object", "import", "syntax"],
)
def test_a_hidden_sentence_takes_sizes_from_the_harness_and_no_worker_text(error, sentence):
    limits = Limits(memory_mb=2048, disk_mb=64)
    with hidden_context(True):
        made = failures.from_worker({**error, "feedback": "LEAK"}, "Importing a.py", limits)
    assert sentence in made.feedback
    assert "LEAK" not in made.feedback and "(7, 9)" not in made.feedback


@pytest.mark.parametrize(
    ("location", "where"),
    [
        ("assignments/t101/attention.py:36 in f", " at assignments/t101/attention.py."),
        ("assignments/t101/attention.py:796 in x_796_25", " at assignments/t101/attention.py."),
        ("assignments/t101/LEAK_796_25.py:3 in f", "."),  # not one of the course's files
        ("assignments/t101/attention.py/../LEAK.py:3", "."),
        (["assignments/t101/attention.py"], "."),  # not text at all
    ],
    ids=["course_file", "line_dropped", "other_file", "dotted_path", "not_text"],
)
def test_a_hidden_sentence_names_a_course_file_and_no_line(location, where):
    """The one part of a worker's location a hidden sentence keeps is its file, and only when it
    is one of the course's module files: a choice among a few names, never learner text."""
    files = frozenset({"assignments/t101/softmax.py", "assignments/t101/attention.py"})
    error = {"kind": "not_implemented", "location": location, "message": "LEAK"}
    with hidden_context(True):
        made = failures.from_worker(error, "f(...)", Limits(), files)
    assert made.feedback == messages.NOT_IMPLEMENTED.format(call="f(...)", where=where[:-1])
    assert (made.location, made.traceback) == ("", "")


def test_a_hidden_test_names_a_fused_requests_part_by_the_harness_label():
    labels = ChainLabels(["MultiHeadAttention(...)"], ["forward"], "MultiHeadAttention")
    answer = {"ok": False, "error": {"kind": "exception", "part": 1, "type": "LEAK_12_7"}}
    with hidden_context(True):
        made = failures.of_failed_answer(answer, "MultiHeadAttention(...)", labels)
    assert made.feedback.startswith("MultiHeadAttention.forward(...) raised")
    assert failures.of_failed_answer(answer, "x", labels).feedback.startswith("LEAK_12_7.forward")


def test_a_forged_internal_failure_carries_no_worker_text_in_a_hidden_test():
    answer = {"ok": False, "internal": "Traceback ... LEAK x=[796.25]"}
    with hidden_context(True):
        hidden = failures.of_failed_answer(answer, "softmax(...)")
    assert isinstance(hidden, RuntimeError)  # a grader error: no score, the instructor is told
    assert "LEAK" not in str(hidden) and failures.HIDDEN_INTERNAL in str(hidden)
    assert "LEAK x=[796.25]" in str(failures.of_failed_answer(answer, "softmax(...)"))
