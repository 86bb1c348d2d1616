"""A softmax mistake costs softmax points only: the attention graders give the learner's
attention module a known-good softmax where it imports the learner's (course rule: a learner
pays once for one mistake). H44: a softmax summing without keepdims, wrong on batched scores,
also cost 12.09 of attention's 20 points. Graded end to end from the reference with that
softmax."""

from __future__ import annotations

import pytest

from .edited import component_scores, edited_reference, grade

NO_KEEPDIMS = {
    "softmax.py": [
        (
            "total = np.sum(e, axis=axis, keepdims=True)",
            "total = np.expand_dims(np.sum(e, axis=axis), -1) if e.ndim < 3 else np.sum(e, axis)",
        ),
    ],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("softmax_once")
    learner = edited_reference(base / "no_keepdims", NO_KEEPDIMS)
    return grade([learner], base / "grades", "softmax", "attention")["no_keepdims"]


def test_the_softmax_loses_points_and_the_attention_none(results):
    scores = component_scores(results)
    assert scores["softmax"] < 10.0
    assert scores["attention"] == pytest.approx(20.0)
