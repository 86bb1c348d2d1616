"""Function stand-ins (a course's FUNCTIONS, runtime/shared/standin_registry.py;
LearnerSession.stand_in_function): a learner module's global that is another learner module's
function, imported by name, is replaced by a known-good one; nothing else is touched. The
stand-ins are this course's file (solutions/standins.py), sent to the worker as text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from autograder.runtime.shared.standin_registry import load
from tests.framework.toy_sessions import toy_session

COURSE_STANDINS = (Path(__file__).parents[2] / "solutions" / "standins.py").read_text()
#: The course's softmax stand-in, as one taking (x, axis=-1) is called
softmax = load(COURSE_STANDINS).function("softmax", lambda x, axis=-1: None)

PACKAGE = {
    "__init__.py": "",
    # a softmax that is wrong on 3-D input (its sum lacks keepdims)
    "softmax.py": """
        import numpy as np

        def softmax(x, axis=-1):
            e = np.exp(x - np.max(x, axis=axis, keepdims=True))
            return e / np.sum(e, axis=axis)
    """,
    "attention.py": """
        from .softmax import softmax

        def weights(scores):
            return softmax(scores, axis=-1)
    """,
    "own.py": """
        def softmax(x, axis=-1):
            return "mine"

        def weights(scores):
            return softmax(scores)
    """,
    "aliased.py": """
        from . import softmax as sm

        def weights(scores):
            return sm.softmax(scores, axis=-1)
    """,
    "broken.py": "raise RuntimeError('no import')\n",
    # H45: correct code the first stand-in broke, and hostile code it rewarded
    "named.py": """
        from .softmax import softmax as wrong_on_3d

        def softmax(scores, dim=-1):  # other names for x and axis
            return wrong_on_3d(scores, axis=dim)
    """,
    "by_keyword.py": """
        from .named import softmax

        def weights(scores):
            return softmax(scores=scores, dim=-1)
    """,
    "renamed.py": """
        from .softmax import softmax as stable_softmax

        def weights(scores):
            return stable_softmax(scores, axis=-1)
    """,
    "tensors.py": """
        import torch
        from .softmax import softmax

        def weights(scores):
            return softmax(scores, axis=-1)
    """,
    "tempered.py": """
        import numpy as np

        def softmax(x, axis=-1, temperature=1.0):
            return np.zeros(3)

        def user(x):
            return softmax(x)
    """,
    "uses_tempered.py": """
        from .tempered import softmax

        def weights(x):
            return softmax(x)
    """,
    "reexport.py": """
        from .own import softmax
    """,
    "uses_reexport.py": """
        from .reexport import softmax

        def weights(x):
            return softmax(x)
    """,
    "swapped.py": """
        import sys

        class NotAModule:
            __slots__ = ()
            softmax = staticmethod(lambda x, axis=-1: x)

        sys.modules[__name__] = NotAModule()
    """,
    "uses_swapped.py": """
        from . import swapped
        softmax = swapped.softmax

        def weights(x):
            return softmax(x)
    """,
}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):
    yield from toy_session(tmp_path_factory.mktemp("submission"), PACKAGE, standins=COURSE_STANDINS)


def test_the_standin_softmax_is_the_contract_one():
    x = np.array([[1000.0, 1001.0], [-np.inf, -np.inf]], dtype=np.float32)
    got = softmax(x)
    assert got.dtype == np.float32
    assert np.allclose(got, [[0.26894142, 0.73105858], [0.0, 0.0]])
    assert np.allclose(softmax(np.arange(6).reshape(2, 3), axis=0).sum(axis=0), 1.0)


def test_a_function_imported_by_name_is_replaced_for_the_importing_module_only(session):
    scores = np.arange(24.0).reshape(2, 3, 4)
    with pytest.raises(Exception, match="could not be broadcast"):
        session.module("attention").weights(scores)  # the learner's softmax, wrong on 3-D
    assert session.stand_in_function("attention", "softmax", source="softmax", kind="softmax")
    got = session.module("attention").weights(scores)
    assert np.allclose(got, softmax(scores))
    with pytest.raises(Exception, match="could not be broadcast"):
        session.module("softmax").softmax(scores)  # the softmax module itself is untouched


def test_a_modules_own_function_or_another_binding_stays(session):
    assert not session.stand_in_function("own", "softmax", source="softmax", kind="softmax")
    assert session.module("own").weights(np.zeros(2)) == "mine"
    assert not session.stand_in_function("aliased", "softmax", source="softmax", kind="softmax")


def test_a_source_that_does_not_import_replaces_nothing(session):
    assert not session.stand_in_function("attention", "softmax", source="broken", kind="softmax")


def test_an_unknown_kind_is_the_graders_error(session):
    with pytest.raises(RuntimeError, match="No stand-in kind is called 'nn.Softmax'"):
        session.stand_in_function("attention", "softmax", source="softmax", kind="nn.Softmax")


def test_the_learners_own_parameter_names_are_honoured(session):
    scores = np.arange(24.0).reshape(2, 3, 4)
    assert session.stand_in_function("by_keyword", "softmax", source="named", kind="softmax")
    assert np.allclose(session.module("by_keyword").weights(scores), softmax(scores))


def test_a_tensor_gets_a_differentiable_tensor_and_nan_stays_nan(session):
    scores = torch.tensor([[1.0, 2.0, -torch.inf], [-torch.inf, -torch.inf, -torch.inf]])
    scores.requires_grad_(True)
    got = softmax(scores)
    assert isinstance(got, torch.Tensor) and got.requires_grad
    assert torch.allclose(got.detach(), torch.tensor([[0.26894142, 0.73105858, 0.0], [0, 0, 0]]))
    got.sum().backward()
    assert torch.isfinite(scores.grad).all()
    assert np.isnan(softmax(np.array([np.nan, 1.0]))).all()
    assert session.stand_in_function("tensors", "softmax", source="softmax", kind="softmax")
    weights = session.module("tensors").weights(torch.arange(6.0).reshape(2, 3))
    assert torch.allclose(weights, torch.softmax(torch.arange(6.0).reshape(2, 3), dim=-1))


@pytest.mark.parametrize(
    "module, source",
    [
        ("uses_tempered", "tempered"),  # another parameter the stand-in cannot honour
        ("uses_reexport", "reexport"),  # a function another module defines, re-exported
        ("uses_swapped", "swapped"),  # not a module in sys.modules (H45: a TypeError, 0 points)
    ],
)
def test_what_the_stand_in_cannot_honour_stays_the_learners(session, module, source):
    assert not session.stand_in_function(module, "softmax", source=source, kind="softmax")


def test_a_function_imported_under_another_name_is_replaced_too(session):
    scores = np.arange(24.0).reshape(2, 3, 4)
    assert session.stand_in_function("renamed", "softmax", source="softmax", kind="softmax")
    assert np.allclose(session.module("renamed").weights(scores), softmax(scores))
