"""The worker's recorders, attacked from inside by learner code that has read them.

The static check (test_static_check.py) decides first, on the trusted side; these are the
second layer. Learner code here reaches the kernels under names no wrapper holds, unwraps the
wrappers, rebinds the guard through sys.modules, pops the function mode, patches the worker's
handler and codec, and closes its own channel. What it cannot do is make a recorded call
vanish silently, or have its own breakage read as the grader's.
"""

from __future__ import annotations

import pytest
import torch

from autograder.runtime import LearnerError, Limits
from autograder.runtime.shared import messages as runtime_messages
from tests.framework.toy_sessions import toy_session

FORBIDDEN = [  # as course.toml lists them: one function under two names, the public one first
    "torch.nn.functional.scaled_dot_product_attention",
    "torch._C._nn.scaled_dot_product_attention",
    "torch._scaled_dot_product_attention_math",
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.MultiheadAttention",
]

SOURCE = """
import os
import sys

import torch
import torch.nn.functional as F

Q = None


def aten(q):
    return torch.ops.aten._scaled_dot_product_attention_math(q, q, q)[0]


def variable_functions(q):
    return torch._C._VariableFunctions._scaled_dot_product_attention_math(q, q, q)[0]


def through_an_alias(q):
    from torch.nn import functional as aliased
    return getattr(aliased, "scaled_dot_" + "product_attention")(q, q, q)


def has_wrapped():
    return hasattr(F.scaled_dot_product_attention, "__wrapped__")


def rebind_the_guard_then_call(q):
    guard = sys.modules["autograder.runtime.worker.guard"]
    guard.drain = lambda: []
    guard._current = None
    guard.install = lambda *a, **k: []
    return F.scaled_dot_product_attention(q, q, q)  # after the rebinding


def unwrap_the_recorder():
    wrapper = F.multi_head_attention_forward
    for cell in wrapper.__closure__:
        if getattr(cell.cell_contents, "__name__", "") == "multi_head_attention_forward":
            F.multi_head_attention_forward = cell.cell_contents
    return 1


def pop_the_mode():
    torch._C._pop_torch_function_stack()
    return 1


def switch_modes_off_meanwhile(q):
    name = "Disable" + "".join(reversed("noitcnuFhcroT"))
    with getattr(torch._C, name)():
        return torch.ops.aten._scaled_dot_product_attention_math(q, q, q)[0]


def patch_the_handler_and_codec():
    handler = sys.modules["autograder.runtime.worker.handler"]
    wire = sys.modules["autograder.runtime.shared.wire"]
    handler.RequestHandler.handle = lambda self, request: {"ok": True, "value": 42}
    wire.dumps = lambda value: b"not an answer"
    return 1


def close_the_channel():
    for fd in range(3, 64):
        try:
            os.close(fd)
        except OSError:
            pass
    return 1


def segfault():
    import ctypes
    return ctypes.string_at(0)


def break_the_worker():
    sys.modules["autograder.runtime.worker.handler"].describe = None
    raise ValueError("the worker must describe this")
"""


@pytest.fixture
def session(tmp_path, request):
    """A session on attack.py; a test marked ``evidence`` gets the static check's evidence of
    a reach into the worker, as the pytest plugin hands it over."""
    marker = request.node.get_closest_marker("evidence")
    limits = Limits(test_timeout=30, import_timeout=30)
    yield from toy_session(
        tmp_path,
        {"__init__.py": "", "attack.py": SOURCE},
        limits=limits,
        forbidden_apis=FORBIDDEN,
        tamper_evidence=marker.args[0] if marker else "",
    )


EVIDENCE = "assignments/t101/attack.py line 60: os.close"


def line_of(text: str) -> int:
    """The line of SOURCE (as written into attack.py) that holds ``text``."""
    return next(n for n, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def _recorded(session, name, *args):
    session.begin_test(name)
    value = getattr(session.module("attack"), name)(*args)
    return value, set(session.end_test().forbidden)


Q = torch.ones(1, 1, 2, 2)


def test_kernels_reached_under_names_no_wrapper_holds_are_recorded(session):
    math = "torch._scaled_dot_product_attention_math"
    line = line_of("torch.ops.aten._scaled")
    assert _recorded(session, "aten", Q)[1] == {(math, "attack.py", line)}
    line = line_of("torch._C._VariableFunctions")
    assert _recorded(session, "variable_functions", Q)[1] == {(math, "attack.py", line)}


def test_one_function_listed_under_two_names_is_recorded_once_under_the_first(session):
    """F.scaled_dot_product_attention is torch._C._nn's function: called through F's wrapper
    under the function mode, it is one call, named as the instructor listed it first."""
    line = line_of('aliased, "scaled_dot_')
    assert _recorded(session, "through_an_alias", Q)[1] == {
        ("torch.nn.functional.scaled_dot_product_attention", "attack.py", line)
    }


def test_a_wrapper_keeps_no_way_back_to_the_original(session):
    assert _recorded(session, "has_wrapped")[0] is False


def test_rebinding_the_guard_through_sys_modules_changes_nothing(session):
    _, records = _recorded(session, "rebind_the_guard_then_call", Q)
    line = line_of("# after the rebinding")
    assert records == {("torch.nn.functional.scaled_dot_product_attention", "attack.py", line)}


@pytest.mark.parametrize(
    "attack, what",
    [
        ("unwrap_the_recorder", "torch.nn.functional.multi_head_attention_forward was replaced"),
        ("pop_the_mode", "the recorder of torch calls was switched off"),
        ("switch_modes_off_meanwhile", "the recorder of torch calls was switched off"),
    ],
)
def test_undoing_a_recorder_fails_the_call_as_tampering(session, attack, what):
    session.begin_test(attack)
    with pytest.raises(LearnerError) as failed:
        getattr(session.module("attack"), attack)(*([Q] if "meanwhile" in attack else []))
    assert failed.value.kind == "tampered"
    assert failed.value.feedback == runtime_messages.TAMPERED.format(
        call=f"{attack}(...)", what=what
    )


def test_the_worker_answers_with_the_handler_and_codec_it_started_with(session):
    assert _recorded(session, "patch_the_handler_and_codec")[0] == 1
    assert _recorded(session, "has_wrapped")[0] is False  # still answered by the real handler


@pytest.mark.parametrize("attack", ["close_the_channel", "break_the_worker"])
@pytest.mark.evidence(EVIDENCE)
def test_breaking_the_worker_is_tampering_when_the_source_reaches_into_it(session, attack):
    session.begin_test(attack)
    with pytest.raises(LearnerError) as failed:
        getattr(session.module("attack"), attack)()
    assert failed.value.kind == "tampered"
    assert f"({EVIDENCE})" in failed.value.feedback


@pytest.mark.evidence(EVIDENCE)
def test_a_worker_killed_by_a_signal_is_told_with_the_signal_and_the_reach(session):
    """Both facts the harness holds: what killed the worker and where the source reaches in."""
    session.begin_test("segfault")
    with pytest.raises(LearnerError) as failed:
        session.module("attack").segfault()
    assert failed.value.kind == "tampered"
    assert failed.value.feedback == runtime_messages.TAMPERED_EVIDENCE.format(
        call="segfault(...)", how="it was killed by SIGSEGV", evidence=EVIDENCE
    )


def test_without_such_a_reach_a_broken_worker_is_not_blamed_on_the_learner(session):
    session.begin_test("close_the_channel")
    with pytest.raises(LearnerError) as closed:
        session.module("attack").close_the_channel()
    assert closed.value.kind == "crash"
    session.begin_test("break_the_worker")
    with pytest.raises(RuntimeError, match="The grading worker failed"):
        session.module("attack").break_the_worker()


def test_a_recorded_call_is_charged_to_the_test_that_made_it_whichever_file_it_sits_in():
    """A forbidden call in softmax.py made while a multi-head attention test ran costs
    multi-head attention (the 4-tuple the plugin records), not the cheaper softmax."""
    from pathlib import Path

    from autograder.config import load_course
    from autograder.results import FORBIDDEN_AT, ForbiddenUse, forbidden_uses

    config = load_course(Path(__file__).resolve().parents[2] / "course.toml")
    api = "torch.nn.functional.scaled_dot_product_attention"
    recorded = (api, "softmax.py", 9, "multi_head_attention")
    static = ForbiddenUse(api, "softmax.py", 9, "multi_head_attention", "seen in the source")
    [use] = forbidden_uses(config, {recorded, static})  # the same call, told once: as called
    assert (use.component, use.file, use.line) == ("multi_head_attention", "softmax.py", 9)
    assert use.sentence == FORBIDDEN_AT.format(
        sentence=config.forbidden.sentence(api), file="assignments/t101/softmax.py", line=9
    )
