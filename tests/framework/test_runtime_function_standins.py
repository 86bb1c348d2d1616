"""Function stand-ins (runtime/standins.FUNCTIONS, LearnerSession.stand_in_function): a learner
module's global that is another learner module's function, imported by name, is replaced by a
known-good one; nothing else is touched."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from autograder.runtime import LearnerSession, Limits, standins

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
}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):
    package_dir = tmp_path_factory.mktemp("submission") / "toypkg"
    package_dir.mkdir()
    for name, text in PACKAGE.items():
        (package_dir / name).write_text(textwrap.dedent(text))
    made = LearnerSession(
        package_dir, package="toypkg", limits=Limits(test_timeout=30, import_timeout=30)
    )
    try:
        yield made
    finally:
        made.close()


def test_the_standin_softmax_is_the_contract_one():
    x = np.array([[1000.0, 1001.0], [-np.inf, -np.inf]], dtype=np.float32)
    got = standins.softmax(x)
    assert got.dtype == np.float32
    assert np.allclose(got, [[0.26894142, 0.73105858], [0.0, 0.0]])
    assert np.allclose(standins.softmax(np.arange(6).reshape(2, 3), axis=0).sum(axis=0), 1.0)


def test_a_function_imported_by_name_is_replaced_for_the_importing_module_only(session):
    scores = np.arange(24.0).reshape(2, 3, 4)
    with pytest.raises(Exception, match="could not be broadcast"):
        session.module("attention").weights(scores)  # the learner's softmax, wrong on 3-D
    assert session.stand_in_function("attention", "softmax", source="softmax", kind="softmax")
    got = session.module("attention").weights(scores)
    assert np.allclose(got, standins.softmax(scores))
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
