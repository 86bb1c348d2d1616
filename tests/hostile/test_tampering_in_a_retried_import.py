"""Tampering seen while the harness imports another course module to weigh a failed import
(runtime/harness/package_imports.py) is the test's tampering, never a reason to import again.

`enc.py` fails to import with a traceback that lies: it names `mha.py`. The harness then imports
`mha.py` on its own in the same test; `mha.py`, told by a flag `enc.py` left that it is asked
for this, undoes a forbidden-API recorder and raises. The tampering was told only as
`mha.py`'s import failure: the harness imported `enc.py` again with `mha.py` a placeholder, in a
fresh worker, and the call of the test that saw the tampering returned its value.
"""

from __future__ import annotations

import pytest

from autograder.runtime import LearnerError
from tests.framework.toy_sessions import toy_session

ENCODER = """
import builtins, os, sys

standing = sys.modules.get("toypkg.mha")
if standing is None or "Placeholder" not in (standing.__doc__ or ""):
    builtins.asked_for_mha = True
    lying = os.path.join(os.path.dirname(__file__), "mha.py")
    exec(compile("raise ImportError('mha.py is broken')", lying, "exec"))


def value():
    return 42
"""

ATTENTION = """
import builtins

from torch import nn

if getattr(builtins, "asked_for_mha", False):
    nn.MultiheadAttention.__init__ = nn.Module.__init__  # a recorder undone
    raise RuntimeError("mha.py fails only when the harness weighs enc.py's failure")
"""


@pytest.fixture
def session(tmp_path):
    yield from toy_session(
        tmp_path,
        {"__init__.py": "", "enc.py": ENCODER, "mha.py": ATTENTION},
        modules=("mha", "enc"),
        display_dir="assignments/toypkg",
        forbidden_apis=("torch.nn.MultiheadAttention",),
    )


def test_tampering_while_another_module_is_weighed_fails_the_test_as_tampering(session):
    session.begin_test("test_enc")
    with pytest.raises(LearnerError) as failed:
        session.module("enc").value()
    session.end_test()
    assert failed.value.kind == "tampered"
    assert "torch.nn.MultiheadAttention was replaced" in failed.value.feedback
    assert session.unavailable == {}  # no placeholder earned by tampering
