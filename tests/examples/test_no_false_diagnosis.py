"""A hint that names a catalogued mistake is given only when the error is that mistake's own.

Such a hint is the diagnosis in summary.md and the class report. H44, graded end to end from
the reference with each edit:
- NumPy's np.dot on batched scores (a broadcast error) was reported as
  [attention/padding-over-queries];
- a 3-D mask not unsqueezed over the heads in multi-head attention (a size error) was reported
  as [multi_head_attention/kv-from-query]; it is now a catalogued mistake of its own,
  [multi_head_attention/mask-no-head-axis], the only one its failures name;
- NaN rows of the torch SelfAttention were named with the NumPy softmax's mistake and its
  np.where fix.

The planted mutants of those two mistakes are still named (`autograder check`, in CI).
"""

from __future__ import annotations

import re

import pytest

from .edited import edited_reference, grade

EDITS = {
    "attention.py": [
        (
            "scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1] ** 0.5",
            "scores = np.dot(Q, np.swapaxes(K, -1, -2)) / Q.shape[-1] ** 0.5",
        ),
        (
            "return weights @ V, weights  # (..., L, d_v), (..., L, S)",
            "return np.dot(weights, V), weights",
        ),
        (
            "weights = weights.masked_fill(~mask, 0.0)  # a fully masked row: NaN -> 0",
            "pass",
        ),
    ],
    "multi_head_attention.py": [
        ("mask = mask.unsqueeze(1)", "mask = mask"),
    ],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("false_diagnosis")
    learner = edited_reference(base / "learner", EDITS)
    return grade([learner], base / "grades", "attention", "multi_head_attention")["learner"]


@pytest.mark.parametrize(
    "component, only_named",
    [("attention", set()), ("multi_head_attention", {"multi_head_attention/mask-no-head-axis"})],
)
def test_errors_of_other_mistakes_name_no_catalogued_mistake(results, component, only_named):
    failed = [
        t for t in results["tests"] if t["tags"] == [component] and t["score"] < t["max_score"]
    ]
    assert len(failed) >= 3  # each edit breaks its component's batched and masked tests
    named = {m for t in failed for m in re.findall(r"\[(\w+/[a-z0-9-]+)\] ", t["output"])}
    assert named == only_named


def test_nan_rows_of_the_torch_self_attention_get_the_torch_sentence(results):
    failed = [t for t in results["tests"] if "SelfAttention" in t["output"] and t["score"] == 0]
    assert failed
    for test in failed:
        assert "torch.softmax of a row that is all -inf is NaN" in test["output"], test["name"]
