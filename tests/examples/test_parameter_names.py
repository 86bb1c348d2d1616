"""A module whose parameters are not the contract's loses points in its own component, with a
sentence naming what differs, never "the grader itself failed" and never points elsewhere.

H44: weights for the feed-forward and Add & Norm tests were drawn for the learner's own
parameter names, so PyTorch-style names (linear1, layer_norm) crashed the trusted side
(KeyError: 'W_1.weight', "not your fault: tell your instructor"), and the encoder's own
parameter-name tests charged the sublayers' names a second time.

A LayerNorm under another attribute (`ln`) costs Add & Norm its parameter test only: its
numbers are graded under its own names (tests/graders/support/add_norm_params.py), as for a
LayerNorm class of the learner's own (issue: one mistake costs the tests that test it).
"""

from __future__ import annotations

import pytest

from .edited import component_scores, grade_one_edit

RENAMED = {
    "feed_forward.py": [
        ("self.W_1 = nn.Linear(d_model, d_ff)", "self.linear1 = nn.Linear(d_model, d_ff)"),
        ("self.W_2 = nn.Linear(d_ff, d_model)", "self.linear2 = nn.Linear(d_ff, d_model)"),
        ("torch.relu(self.W_1(x))", "torch.relu(self.linear1(x))"),
        ("return self.W_2(self.dropout(hidden))", "return self.linear2(self.dropout(hidden))"),
    ],
    "add_norm.py": [
        ("self.norm = nn.LayerNorm(d_model, eps=eps)", "self.ln = nn.LayerNorm(d_model, eps=eps)"),
        ("return self.norm(x + self", "return self.ln(x + self"),
    ],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("parameter_names")
    return grade_one_edit(base, "renamed", RENAMED)


def test_no_grader_error_and_no_points_lost_outside_the_renamed_components(results):
    assert results["extra_data"]["grader_errors"] == []
    assert "not your fault" not in " ".join(t["output"] for t in results["tests"])
    scores = component_scores(results)
    assert scores["feed_forward"] == 0.0 and scores["add_norm"] == pytest.approx(9.5)
    assert scores["encoder"] == pytest.approx(25.0)
    assert results["score"] == pytest.approx(100.0 - 10.0 - (10.0 - scores["add_norm"]))


@pytest.mark.parametrize(
    "component, difference",
    [
        (
            "feed_forward",
            "it lacks W_1.weight, W_1.bias, W_2.weight, W_2.bias; it also has linear1.weight, "
            "linear1.bias, linear2.weight, linear2.bias, which the contract does not.",
        ),
        (
            "add_norm",
            "it lacks norm.bias, norm.weight; it also has ln.weight, ln.bias, which the "
            "contract does not.",
        ),
    ],
)
def test_every_failed_test_names_what_differs(results, component, difference):
    failed = [t for t in results["tests"] if t["tags"] == [component] and t["score"] == 0]
    assert failed
    for test in failed:
        assert f"has the wrong parameters: {difference}" in test["output"], test["name"]
