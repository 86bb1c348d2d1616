"""Fused method calls (obj.name(...) in one request) on hostile learner classes: the worker's
listing of a class's functions runs no learner code, and a name shared by two classes is never
fused, so every call means what reading the attribute and calling it would mean."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from autograder.runtime import LearnerSession, Limits, RemoteMethod
from autograder.runtime.worker.learner_objects import method_names as _method_names

HOSTILE = """
    from torch import nn


    class HangingDir(type(nn.Module)):
        def __dir__(cls):
            while True:
                pass


    class RaisingDir(type(nn.Module)):
        def __dir__(cls):
            raise RuntimeError("no dir")


    class StrangeDir(type(nn.Module)):
        def __dir__(cls):
            return [1, None, "eval"]


    def _model(meta, name):
        class Model(nn.Module, metaclass=meta):
            def double(self, x):
                return x * 2

            def forward(self, x):
                return x

        Model.__qualname__ = name
        return Model


    Hangs = _model(HangingDir, "Hangs")
    Raises = _model(RaisingDir, "Raises")
    Strange = _model(StrangeDir, "Strange")


    def _twin(with_method):
        class Twin(nn.Module):  # the same qualified name twice
            if with_method:
                def width(self):
                    return 7
            else:
                width = 5

        return Twin


    TwinMethod = _twin(True)
    TwinValue = _twin(False)
"""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory):
    package = tmp_path_factory.mktemp("submission") / "toypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "hostile.py").write_text(textwrap.dedent(HOSTILE))
    session = LearnerSession(
        Path(package),
        package="toypkg",
        limits=Limits(test_timeout=5, import_timeout=20, memory_mb=2048, output_kb=1),
        forbidden_apis=[],
        forbidden_message="{api}",
        display_dir="submission/toypkg",
    )
    try:
        yield session.module("hostile")
    finally:
        session.close()


@pytest.mark.parametrize("name", ["Hangs", "Raises", "Strange"])
def test_a_metaclass_dir_neither_runs_nor_changes_the_call(hostile, name: str) -> None:
    model = getattr(hostile, name)()  # dir(Model) would hang or raise here
    assert isinstance(model.double, RemoteMethod)  # listed all the same
    assert model.double(3.0) == 6.0


def test_two_classes_under_one_name_are_never_fused(hostile) -> None:
    assert hostile.TwinMethod().width() == 7
    value = hostile.TwinValue()
    assert value.width == 5  # read as the value it is, not as a method to call
    assert hostile.TwinMethod().width() == 7  # read, then called


def test_the_listing_follows_instance_lookup_along_the_mro() -> None:
    class Base:
        def shown(self):
            return 1

        def hidden(self):
            return 2

    class Child(Base):
        hidden = 3  # the first class along the MRO decides

        @property
        def prop(self):
            return 4

    assert _method_names(Child) == ["shown"]
