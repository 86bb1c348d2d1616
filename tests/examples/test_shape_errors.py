"""The attention's own ValueError must name both shapes, as its docstring asks (H44: without any
check, NumPy's own ValueError from inside the computation passed and scored full marks)."""

from __future__ import annotations

import pytest

from .edited import grade_one_edit

NO_CHECKS = {
    "attention.py": [
        ("    if Q.shape[-1] != K.shape[-1]:\n        raise", "    if False:\n        raise"),
        ("    if K.shape[-2] != V.shape[-2]:\n        raise", "    if False:\n        raise"),
    ],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("shape_errors")
    return grade_one_edit(base, "no_checks", NO_CHECKS, "attention")


def test_numpys_own_error_does_not_count_as_naming_the_shapes(results):
    failed = [t for t in results["tests"] if t["status"] != "passed"]
    assert [t["name"].rsplit("[", 1)[1] for t in failed] == ["widths_differ]", "lengths_differ]"]
    for test in failed:
        assert "raised ValueError, but its message does not name both shapes" in test["output"]
