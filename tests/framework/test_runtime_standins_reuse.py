"""A stand-in handed to learner code cannot be used for a later stage's tests of its component.

Learner code may keep what the harness hands it (a stand-in's class, a known-good function) and
call it in a later request. The harness (runtime/harness/standin_custody.py) stops a worker that
was handed a stand-in before the first test of another stage ("hidden" after "visible"), so the
hidden tests run in a fresh worker, with a fresh private copy; a worker never handed one is kept.
The worker loads the course's stand-ins file only when a request sets one, so learner code in a
fresh worker finds no stand-in even by introspection.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from autograder.runtime import LearnerError, LearnerSession
from tests.framework.toy_sessions import toy_session

STANDINS = """\
from torch import nn


class DoubleStandIn(nn.Module):
    def forward(self, x):
        return 2 * x


class TripleStandIn(nn.Module):  # never handed in these tests
    def forward(self, x):
        return 3 * x


def double_like(own):
    return lambda x: 2 * x


KINDS = {"double": (DoubleStandIn, {}), "triple": (TripleStandIn, {})}
FUNCTIONS = {"double": double_like}
"""

LEARNER = {
    "__init__.py": "",
    "parts.py": """
        from pathlib import Path

        from torch import nn

        KEPT = []  # what the grader handed this module, kept for later requests


        def double(x):
            raise NotImplementedError("double is not implemented")


        class Host(nn.Module):
            def __init__(self):
                super().__init__()
                self.part = nn.Identity()

            def forward(self, x):
                KEPT.append(type(self.part))
                return self.part(x)


        def kept():
            return [kind.__name__ for kind in KEPT]


        def standins_in_memory():
            # every nn.Module class alive in this process, as introspection would find them
            found, pending = set(), [nn.Module]
            while pending:
                kind = pending.pop()
                found.add(kind.__name__)
                pending.extend(kind.__subclasses__())
            return "DoubleStandIn" in found


        def mark_disk():
            Path("mark").write_text("handed")


        def disk_marked():
            return Path("mark").exists()


        CALLS = []


        def calls():
            # how many times this process ran it: 1 in each fresh worker
            CALLS.append(None)
            return len(CALLS)
    """,
    "hooks.py": """
        import builtins

        import torch
        from torch import nn

        SEEN = []
        _build_class = builtins.__build_class__


        def _spy_build_class(body, name, *bases, **kwargs):
            SEEN.append(name)
            return _build_class(body, name, *bases, **kwargs)


        class Spy(nn.Module):
            def __init_subclass__(cls, **kwargs):
                SEEN.append(cls.__name__)


        def hook_class_creation():
            builtins.__build_class__ = _spy_build_class
            nn.Module.__init_subclass__ = classmethod(lambda cls, **k: SEEN.append(cls.__name__))


        def rebind_module():
            torch.nn.Module = Spy


        def seen():
            class Mine(nn.Module):
                pass

            return SEEN
    """,
    "uses.py": """
        from .parts import double

        KEPT = []


        def quadruple(x):
            KEPT.append(double)
            return double(double(x))


        def kept_double(x):
            return KEPT[-1](x)
    """,
}


@pytest.fixture
def session(tmp_path) -> Iterator[LearnerSession]:
    yield from toy_session(tmp_path, LEARNER, standins=STANDINS)


def run_test(session: LearnerSession, stage: str, calls) -> list:
    """One test of ``stage``: ``calls`` (a function of the session) run between its brackets."""
    session.begin_test(f"test of {stage}", stage=stage)
    try:
        return calls(session)
    finally:
        session.end_test()


def hand_a_module_standin(session: LearnerSession) -> list:
    parts = session.module("parts")
    host = parts.Host()
    session.set_standin(host, "part", "double", {}, None)
    host(3.0)
    parts.mark_disk()
    return [parts.kept(), parts.calls()]


def test_a_worker_handed_a_standin_in_the_visible_tests_is_replaced_before_the_hidden_ones(
    session,
):
    assert run_test(session, "visible", hand_a_module_standin) == [["DoubleStandIn"], 1]
    # within the stage the same worker goes on (the stand-in's own tests ran before it)
    assert run_test(session, "visible", lambda s: [s.module("parts").calls()]) == [2]
    generation = session.generation
    parts = session.module("parts")
    hidden = run_test(
        session,
        "hidden",
        lambda s: [parts.calls(), parts.kept(), parts.standins_in_memory(), parts.disk_marked()],
    )
    assert session.generation == generation + 1
    assert hidden == [1, [], False, False]  # nothing kept: not in memory, not on its disk


def test_a_known_good_function_handed_in_the_visible_tests_is_gone_in_the_hidden_ones(session):
    def hand(s):
        assert s.stand_in_function("uses", "double", source="parts", kind="double") is True
        return [s.module("uses").quadruple(3.0)]

    assert run_test(session, "visible", hand) == [12.0]
    with pytest.raises(LearnerError) as failure:
        run_test(session, "hidden", lambda s: [s.module("uses").kept_double(3.0)])
    assert failure.value.exc_type == "IndexError"  # nothing kept from the visible tests


def test_a_worker_never_handed_a_standin_goes_on_into_the_hidden_tests(session):
    parts = session.module("parts")
    assert run_test(session, "visible", lambda s: [parts.calls()]) == [1]
    generation = session.generation
    assert run_test(session, "hidden", lambda s: [parts.calls()]) == [2]
    assert session.generation == generation


def test_the_standins_file_is_loaded_only_by_the_first_request_that_sets_one(session):
    parts = session.module("parts")
    assert parts.standins_in_memory() is False
    host = parts.Host()
    session.set_standin(host, "part", "double", {}, None)
    assert parts.standins_in_memory() is True
    assert host(5.0) == 10.0


@pytest.mark.parametrize("hook", ["hook_class_creation", "rebind_module"])
def test_learner_code_that_hooks_class_creation_is_not_shown_the_standin_classes(session, hook):
    hooks = session.module("hooks")
    getattr(hooks, hook)()
    host = session.module("parts").Host()
    session.set_standin(host, "part", "double", {}, None)  # the file is loaded now
    seen = hooks.seen()
    assert "TripleStandIn" not in seen and "DoubleStandIn" not in seen
    assert "Mine" in seen  # the learner's own hook is back afterwards
    assert host(5.0) == 10.0
