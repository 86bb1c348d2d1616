"""Make the reference implementations importable as `t101` for the proofs in this folder only.

`solutions/` (found relative to this file, so any clone works) is put on sys.path just long
enough to import the package `t101`; the entry is then removed again, so nothing outside this
folder can pick up the references by accident (submodules are found through `t101.__path__`).
The repository root is put on sys.path so that `tests.graders.support.torch_equivalents`
imports as a package module.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO_ROOT / "solutions"
ASSIGNMENTS = REPO_ROOT / "assignments"


def _import_reference_package() -> None:
    sys.path.insert(0, str(SOLUTIONS))
    try:
        t101 = importlib.import_module("t101")
    finally:
        sys.path.remove(str(SOLUTIONS))
    where = Path(t101.__file__).resolve().parent
    if where != SOLUTIONS / "t101":
        raise ImportError(
            f"tests/reference: expected `t101` to be the references in {SOLUTIONS / 't101'}, "
            f"got the package in {where}; something imported another t101 first."
        )


if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
_import_reference_package()


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh, seeded NumPy generator per test."""
    return np.random.default_rng(20170612)


@pytest.fixture(autouse=True)
def _seed_torch():
    import torch

    torch.manual_seed(0)
    yield
