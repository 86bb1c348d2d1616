"""Fixtures for the hidden graders: the reference implementations, in the trusted process.

The reference package (`reference_dir` in course.toml, solutions/t101) is imported under the
private name `t101_reference`, so it can never be mistaken for, or shadow, the learner's `t101`
(which only the worker imports).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.graders.support.locations import learner_lines  # noqa: F401  (autouse: the learner's line)

REFERENCE_PACKAGE = "t101_reference"
NO_REFERENCE = (
    "The hidden graders need the reference implementations, but {path} has no __init__.py; "
    "set reference_dir in course.toml to the folder that holds the reference package."
)
NO_REFERENCE_DIR = (
    "The hidden graders need the reference implementations, but course.toml sets no "
    "reference_dir; set it to the folder that holds the reference package (solutions/t101)."
)


class Reference:
    """The reference package: `reference.module("attention").scaled_dot_product_attention`."""

    def __init__(self, package: ModuleType) -> None:
        self._package = package

    def module(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self._package.__name__}.{name}")

    def build(self, module: str, cls: str, *args, state=None, **kwargs):
        """A reference module `cls(*args, **kwargs)` from `module`, with `state` loaded (when
        given), in eval mode."""
        built = getattr(self.module(module), cls)(*args, **kwargs)
        if state is not None:
            built.load_state_dict(state)
        return built.eval()


def import_reference(path: Path | None) -> ModuleType:
    """Import the package at `path` as `t101_reference` (once per session)."""
    if REFERENCE_PACKAGE in sys.modules:
        return sys.modules[REFERENCE_PACKAGE]
    if path is None:
        raise RuntimeError(NO_REFERENCE_DIR)
    init = Path(path) / "__init__.py"
    if not init.is_file():
        raise RuntimeError(NO_REFERENCE.format(path=path))
    spec = importlib.util.spec_from_file_location(
        REFERENCE_PACKAGE, init, submodule_search_locations=[str(path)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[REFERENCE_PACKAGE] = package
    try:
        spec.loader.exec_module(package)
    except BaseException:
        del sys.modules[REFERENCE_PACKAGE]
        raise
    return package


@pytest.fixture
def reference(course) -> Reference:
    """The reference implementations, imported in the trusted process."""
    try:
        return Reference(import_reference(course.course.reference_dir))
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
