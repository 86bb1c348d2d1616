"""A forbidden API that torch's own code of another forbidden API calls is not the learner's
call: the worker marks it with the API it was made in, and the points rule tells only the
learner's own use. The mark is evidence, weighed in the harness: learner code that fakes it
(a forbidden API's code run with no call of that API) or that makes a direct call from a
callback the forbidden API calls still has that call told, with its own line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograder.config import load_course
from autograder.results import FORBIDDEN_AT, ForbiddenUse, NestedCall, forbidden_uses
from autograder.runtime import Limits
from tests.framework.toy_sessions import toy_session

MHA = "torch.nn.MultiheadAttention"
MHA_FORWARD = "torch.nn.functional.multi_head_attention_forward"
SDPA = "torch.nn.functional.scaled_dot_product_attention"
LAYER = "torch.nn.TransformerEncoderLayer"
FORBIDDEN = [  # as course.toml lists them, in its order
    SDPA,
    "torch._C._nn.scaled_dot_product_attention",
    "torch._scaled_dot_product_attention_math",
    "torch._scaled_dot_product_flash_attention_for_cpu",
    "torch._native_multi_head_attention",
    "torch._transformer_encoder_layer_fwd",
    MHA_FORWARD,
    MHA,
    LAYER,
]

SOURCE = """
import torch
from torch import nn
import torch.nn.functional as F


def library_attention(x):
    mha = nn.MultiheadAttention(4, 2, batch_first=True)  # built
    return mha(x, x, x)[0]  # called


def own_callback(x):
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, activation=act, batch_first=True)
    return layer(x)  # the layer called


def act(h):
    F.scaled_dot_product_attention(h, h, h)  # the learner's own call
    return h


class Borrowed(nn.Module):
    forward = nn.MultiheadAttention.forward  # torch's code, with no nn.MultiheadAttention


def borrowed_code(x):
    fake = Borrowed()
    fake.batch_first, fake._qkv_same_embed_dim = True, True
    fake.embed_dim, fake.num_heads, fake.dropout, fake.add_zero_attn = 4, 2, 0.0, False
    fake.in_proj_weight, fake.in_proj_bias = torch.eye(4).repeat(3, 1), None
    fake.bias_k = fake.bias_v = None
    fake.out_proj = nn.Linear(4, 4)
    return fake(x, x, x)[0]  # the borrowed code called
"""


def line_of(text: str) -> int:
    return next(n for n, line in enumerate(SOURCE.splitlines(), 1) if text in line)


@pytest.fixture
def session(tmp_path):
    yield from toy_session(
        tmp_path,
        {"__init__.py": "", "attack.py": SOURCE},
        limits=Limits(test_timeout=30, import_timeout=30),
        forbidden_apis=FORBIDDEN,
    )


def _recorded(session, name):
    session.begin_test(name)
    getattr(session.module("attack"), name)(torch.ones(1, 3, 4))
    return set(session.end_test().forbidden)


def test_a_call_inside_a_forbidden_module_is_marked_with_it(session):
    assert _recorded(session, "library_attention") == {
        (MHA, "attack.py", line_of("# built")),
        (MHA_FORWARD, "attack.py", line_of("# called"), MHA),
    }


def test_a_call_from_the_learners_callback_is_the_learners_own(session):
    """The activation runs inside the layer's code, but its own frame is the learner's: its
    call is direct, at its own line; what the layer's code calls is marked with the layer."""
    built, called = line_of("layer = nn."), line_of("# the layer called")
    assert _recorded(session, "own_callback") == {
        (LAYER, "attack.py", built),
        (MHA, "attack.py", built, LAYER),  # the layer's own self_attn
        (MHA_FORWARD, "attack.py", called, LAYER),  # the outermost API, not MHA
        (SDPA, "attack.py", called, LAYER),  # by multi_head_attention_forward
        (SDPA, "attack.py", line_of("# the learner's own call")),
    }


def test_torch_code_run_without_its_api_marks_a_call_that_is_still_told(session):
    """Borrowing nn.MultiheadAttention.forward makes the mark without any call of
    nn.MultiheadAttention: the points rule, in the harness, finds no use of it to tell, so
    the marked call is told with its own line and zeroes the component."""
    line = line_of("# the borrowed code called")
    records = _recorded(session, "borrowed_code")
    assert records == {(MHA_FORWARD, "attack.py", line, MHA)}
    config = load_course(Path(__file__).resolve().parents[2] / "course.toml")
    [use] = forbidden_uses(config, {NestedCall(MHA_FORWARD, "attack.py", line, MHA, "encoder")})
    assert (use.api, use.line, use.component) == (MHA_FORWARD, line, "encoder")


# The points rule alone, on the records the plugin hands it.

COMPONENT = "multi_head_attention"
FILE = "multi_head_attention.py"


@pytest.fixture(scope="module")
def config():
    return load_course(Path(__file__).resolve().parents[2] / "course.toml")


def _told(config, records) -> list[tuple]:
    return [(u.api, u.file, u.line, u.component) for u in forbidden_uses(config, records)]


def test_a_call_inside_a_told_use_is_not_told_again(config):
    built, called = (MHA, FILE, 25, COMPONENT), NestedCall(MHA_FORWARD, FILE, 53, MHA, COMPONENT)
    uncharged = NestedCall(MHA_FORWARD, FILE, 53, MHA)  # the session's record of the same call
    assert _told(config, {built, called, uncharged}) == [built]
    [use] = forbidden_uses(config, {built, called})
    assert use.sentence == FORBIDDEN_AT.format(
        sentence=config.forbidden.sentence(MHA), file=f"assignments/t101/{FILE}", line=25
    )


def test_calls_nested_twice_are_explained_by_the_outermost_use(config):
    layer = (LAYER, FILE, 12, COMPONENT)
    inner = NestedCall(MHA, FILE, 12, LAYER, COMPONENT)
    innermost = NestedCall(MHA_FORWARD, FILE, 40, MHA, COMPONENT)  # self_attn called directly
    assert _told(config, {layer, inner, innermost}) == [layer]


def test_the_static_checks_use_explains_a_nested_call_too(config):
    static = ForbiddenUse(MHA, FILE, 25, COMPONENT, "seen in the source")
    called = NestedCall(MHA_FORWARD, FILE, 53, MHA, COMPONENT)
    assert forbidden_uses(config, {static, called}) == [static]


def test_a_use_told_in_another_component_explains_nothing_here(config):
    """The encoder's test made the nested call; the use was told for multi-head attention:
    the encoder's component is charged for its own call, as before."""
    built = (MHA, FILE, 25, COMPONENT)
    called = NestedCall(MHA_FORWARD, FILE, 53, MHA, "encoder")
    assert _told(config, {built, called}) == [
        (MHA, FILE, 25, COMPONENT),
        (MHA_FORWARD, FILE, 53, "encoder"),
    ]


def test_a_nested_call_with_no_told_use_is_told(config):
    called = NestedCall(MHA_FORWARD, FILE, 53, MHA)  # made outside any test: the file's
    assert _told(config, {called}) == [(MHA_FORWARD, FILE, 53, COMPONENT)]


def test_a_session_that_raises_names_the_learners_use_alone(tmp_path):
    """With forbidden_raises, the call fails naming where nn.MultiheadAttention was built,
    and not "and 1 more place(s)" for what its forward called."""
    from autograder.runtime import LearnerError

    made = toy_session(
        tmp_path,
        {"__init__.py": "", "attack.py": SOURCE},
        forbidden_apis=FORBIDDEN,
        forbidden_message="{api} is not yours.",
        display_dir="assignments/toypkg",
        forbidden_raises=True,
    )
    for session in made:
        with pytest.raises(LearnerError) as failed:
            session.module("attack").library_attention(torch.ones(1, 3, 4))
        assert failed.value.feedback == (
            f"{MHA} is not yours. It was called at assignments/toypkg/attack.py:"
            f"{line_of('# built')}."
        )
