"""Compiled code in a submission, which the static check cannot read (hostile finding).

The static check reads the package's `.py` files, and the worker's copy held every file: a
sourceless module (`_impl.pyc` beside `attention.py`, no `_impl.py`) is imported by Python as
any module is. One that called `torch.nn.functional.scaled_dot_product_attention` and, on
import, rewrote the worker's `pickle.dumps` to drop the recorders' records (the second layer,
learner-forgeable) scored 100 of 100, with no forbidden use told and nothing flagged. The
harness now leaves every bytecode or extension module out of what it reads and copies, saying
why, so only source the check has read can run.
"""

from __future__ import annotations

import importlib.machinery
import py_compile
from pathlib import Path

import pytest

from autograder.runtime.harness import private_copy

from ..examples.edited import component_scores, edited_reference, grade

#: A module that calls a forbidden API and keeps the call out of the worker's answers.
HIDDEN = """
import pickle
import torch

_dumps = pickle.dumps


def _strip(tree):
    if isinstance(tree, dict):
        return {k: [] if k == "forbidden" else _strip(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_strip(v) for v in tree)
    return tree


pickle.dumps = lambda obj, *args, **kwargs: _dumps(_strip(obj), *args, **kwargs)


def touch():
    z = torch.zeros(1, 1, 1)
    return torch.nn.functional.scaled_dot_product_attention(z, z, z)
"""
WEIGHTS = "    weights = softmax(scores, axis=-1)  # (..., L, S)\n"
EDITS = {
    "attention.py": [
        ("from .softmax import softmax\n", "from .softmax import softmax\nfrom . import _impl\n"),
        (WEIGHTS, WEIGHTS + "    _impl.touch()\n"),
    ]
}


def test_a_sourceless_module_calling_a_forbidden_api_earns_nothing(tmp_path: Path):
    learner = edited_reference(tmp_path / "compiled", EDITS)
    source = tmp_path / "_impl.py"
    source.write_text(HIDDEN, encoding="utf-8")
    py_compile.compile(str(source), cfile=str(learner / "assignments/t101/_impl.pyc"))
    results = grade([learner], tmp_path / "grades", "attention")["compiled"]
    assert component_scores(results)["attention"] == 0.0
    attention = [t for t in results["tests"] if t["tags"] == ["attention"]]
    assert attention and all(t["status"] == "failed" for t in attention)
    assert "_impl" in attention[0]["output"]  # its import failed, naming the module


@pytest.mark.parametrize(
    "name",
    sorted(
        {"_impl.pyc", "deep/_impl.pyc", "_impl.so", "_impl.abi3.so"}
        | {f"_impl{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES}
    ),
)
def test_compiled_files_are_left_out_of_the_workers_copy_with_why(tmp_path: Path, name: str):
    package = tmp_path / "toypkg"
    (package / "deep").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "layers.py").write_text("X = 1\n")
    (package / name).write_bytes(b"\x00compiled")
    copy = private_copy.copy_package(package, "toypkg")
    try:
        assert copy.refused == {name: private_copy.COMPILED}
        assert not (copy.root / "toypkg" / name).exists()
        assert (copy.root / "toypkg" / "layers.py").read_text() == "X = 1\n"
    finally:
        private_copy.shutil.rmtree(copy.base)
