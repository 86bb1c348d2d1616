"""The worker's placeholders for modules that failed to import (worker/unavailable_modules.py),
in this process: what an importing module finds while they stand, and that they go after."""

from __future__ import annotations

import sys
import types

import pytest
import torch

from autograder.runtime.worker.unavailable_modules import unavailable

FILE = "assignments/pkg/parts.py"


@pytest.fixture
def package():
    module = types.ModuleType("pkg_unavailable")
    module.__path__ = []
    sys.modules["pkg_unavailable"] = module
    yield module
    sys.modules.pop("pkg_unavailable", None)


def test_a_class_placeholder_is_built_with_any_arguments_and_fails_when_called(package):
    with unavailable("pkg_unavailable", {"parts": FILE}):
        from pkg_unavailable.parts import MultiHeadAttention  # noqa: PLC0415

        module = MultiHeadAttention(8, 2, dropout=0.1)
    assert isinstance(module, torch.nn.Module)
    assert list(module.parameters()) == []
    with pytest.raises(ImportError) as raised:
        module(torch.zeros(1, 2, 8))
    assert str(raised.value) == (
        f"MultiHeadAttention is not available: {FILE}, which defines it, could not be imported "
        "(its own tests say why), so this file was imported with a placeholder in its place."
    )


def test_a_function_placeholder_fails_when_called(package):
    with unavailable("pkg_unavailable", {"parts": FILE}):
        from pkg_unavailable import parts  # noqa: PLC0415

        softmax = parts.softmax
    with pytest.raises(ImportError, match=r"^softmax is not available: assignments/pkg/parts"):
        softmax([1.0, 2.0])
    with pytest.raises(AttributeError):
        parts.__wrapped__  # noqa: B018  (dunder probes find nothing, as on a real module)


def test_the_placeholders_are_gone_after_the_import(package):
    with unavailable("pkg_unavailable", {"parts": FILE}):
        assert "pkg_unavailable.parts" in sys.modules
        assert hasattr(package, "parts")
    assert "pkg_unavailable.parts" not in sys.modules
    assert not hasattr(package, "parts")


def test_an_imported_module_is_left_as_it_is(package):
    real = types.ModuleType("pkg_unavailable.parts")
    sys.modules["pkg_unavailable.parts"] = real
    try:
        with unavailable("pkg_unavailable", {"parts": FILE}):
            assert sys.modules["pkg_unavailable.parts"] is real
        assert sys.modules["pkg_unavailable.parts"] is real
    finally:
        sys.modules.pop("pkg_unavailable.parts", None)
