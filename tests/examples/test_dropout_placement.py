"""Dropout in the wrong place loses the train-mode test of its component, with a sentence that
says where the dropout belongs; nothing else (H44: all three scored full marks, as every other
test runs in eval mode). Graded end to end from the reference with the dropout moved:

* feed-forward: after W_2 instead of on relu(W_1(x));
* multi-head attention: on the output instead of on the attention weights;
* Add & Norm: on x + sublayer_output instead of on sublayer_output.
"""

from __future__ import annotations

import pytest

from .edited import component_scores, edited_reference, grade

MOVED = {
    "feed_forward.py": [
        (
            "return self.W_2(self.dropout(hidden))",
            "return self.dropout(self.W_2(hidden))",
        ),
    ],
    "multi_head_attention.py": [
        ("        weights = self.dropout(weights)\n", ""),
        ("return self.W_o(concat), weights", "return self.dropout(self.W_o(concat)), weights"),
    ],
    "add_norm.py": [
        (
            "return self.norm(x + self.dropout(sublayer_output))",
            "return self.norm(self.dropout(x + sublayer_output))",
        ),
    ],
}
SAID = {
    "feed_forward": "[feed_forward/dropout-after-second-linear] Your dropout acts on the output "
    "of W_2; it belongs on the hidden activations, W_2(dropout(relu(W_1(x))))",
    "multi_head_attention": "[multi_head_attention/dropout-on-output] Your dropout acts on the "
    "output after W_o; in multi-head attention it acts on the attention weights only",
    "add_norm": "with a zero sublayer_output gives another output in train mode than in eval "
    "mode: the dropout touched x too.",
}


NOT_PASSED = {
    "encoder.py": [
        (
            "self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)",
            "self.self_attn = MultiHeadAttention(d_model, num_heads)",
        ),
        ("self.add_norm_2 = AddNorm(d_model, dropout)", "self.add_norm_2 = AddNorm(d_model)"),
    ],
}
IGNORED = {
    "feed_forward.py": [("self.dropout = nn.Dropout(dropout)", "self.dropout = nn.Dropout()")]
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("dropout")
    learners = [
        edited_reference(base / "moved", MOVED),
        edited_reference(base / "p", IGNORED),
        edited_reference(base / "encoder", NOT_PASSED),
    ]
    return grade(learners, base / "grades", *SAID, "encoder")


@pytest.fixture(scope="module")
def results(graded) -> dict:
    return graded["moved"]


def test_a_dropout_that_ignores_its_argument_is_told_so(graded):
    """H45: nn.Dropout() (p = 0.5 whatever the module was given) passed when the tests used
    p = 0.5; they use 0.25, and say which probability was used."""
    (failed,) = [t for t in graded["p"]["tests"] if t["status"] != "passed"]
    assert (
        "drops with nn.Dropout's default probability 0.5, not the dropout it was given"
        in (failed["output"])
    )


@pytest.mark.parametrize("component", sorted(SAID))
def test_only_the_train_mode_test_fails_and_says_where_dropout_belongs(results, component):
    failed = [t for t in results["tests"] if t["tags"] == [component] and t["status"] != "passed"]
    assert [t["name"].split(": ", 1)[1].split(",")[0] for t in failed] == ["in train mode"]
    # first, not after numbers (H46: the terminal's first-problem line cut it before a hint)
    assert SAID[component] in failed[0]["output"][:300], failed[0]["output"]
    total = sum(t["max_score"] for t in results["tests"] if t["tags"] == [component])
    assert component_scores(results)[component] == pytest.approx(total - failed[0]["max_score"])


def test_an_encoder_layer_that_keeps_dropout_from_its_sublayers_is_told_which(graded):
    """H46: EncoderLayer building its sublayers without dropout scored 25/25 (every encoder
    test runs in eval mode or with stand-ins)."""
    (failed,) = [t for t in graded["encoder"]["tests"] if t["status"] != "passed"]
    assert (
        "gives its sublayers another dropout: self_attn.dropout.p is 0.0, add_norm_2.dropout.p "
        "is 0.0; expected 0.3 each."
    ) in failed["output"]
