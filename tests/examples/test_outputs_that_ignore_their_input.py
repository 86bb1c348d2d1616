"""A property test passes only on outputs that depend on the input the property is about.

A red-team submission of constant or input-blind outputs scored 22 of 100, some of it from
property tests that such outputs pass trivially: an attention whose weights ignore the queries
(every query the same output) "permuted its outputs" when the queries were permuted. The
permutation tests now also require the permuted outputs to move, and Add & Norm's per-token
test requires the changed token's output to change (naming add_norm/no-residual when it does
not: that output does not use x), as the feed-forward's does. Graded end to end from the
reference with each edit.
"""

from __future__ import annotations

from .edited import edited_reference, grade

QUERY_BLIND = {
    "attention.py": [
        (
            "    weights = softmax(scores, axis=-1)  # (..., L, S)",
            "    weights = softmax(0.0 * scores, axis=-1)  # (..., L, S)",
        )
    ]
}
X_BLIND = {
    "add_norm.py": [
        (
            "        return self.norm(x + self.dropout(sublayer_output))  # (..., d_model)",
            "        return self.norm(self.dropout(sublayer_output))  # (..., d_model)",
        )
    ]
}
TOKEN_BLIND = {
    "feed_forward.py": [
        (
            "        hidden = torch.relu(self.W_1(x))  # (..., d_ff)",
            "        hidden = torch.relu(self.W_1(0.0 * x))  # (..., d_ff)",
        )
    ],
    "multi_head_attention.py": [
        (
            "        Q = self._split_heads(self.W_q(query))  # (B, h, L, d_k)",
            "        Q = self._split_heads(self.W_q(0.0 * query))  # (B, h, L, d_k)",
        )
    ],
}
PERMUTING = "Scaled dot-product attention: permuting the queries permutes the outputs"
PER_TOKEN = "Add & Norm: changing one token changes only that token's output"
FFN_TOKEN = "Position-wise feed-forward: changing one token changes only that token's output"
MHA_PERMUTING = "Multi-head attention: permuting the tokens of x permutes the outputs"


def _test(results: dict, start: str) -> dict:
    (found,) = [t for t in results["tests"] if t["name"].startswith(start)]
    return found


def test_input_blind_outputs_fail_the_property_tests_about_that_input(tmp_path):
    learners = [
        edited_reference(tmp_path / "query_blind", QUERY_BLIND),
        edited_reference(tmp_path / "x_blind", X_BLIND),
        edited_reference(tmp_path / "token_blind", TOKEN_BLIND),
    ]
    chosen = ("attention", "add_norm", "feed_forward", "multi_head_attention")
    results = grade(learners, tmp_path / "grades", *chosen)
    permuting = _test(results["query_blind"], PERMUTING)
    assert permuting["status"] == "failed"
    assert permuting["output"].startswith(
        "Permuting the queries left every output where it was, so the queries that moved got "
        "the same output"
    )
    per_token = _test(results["x_blind"], PER_TOKEN)
    assert per_token["status"] == "failed"
    assert "so the output does not use x: [add_norm/no-residual]" in per_token["output"]
    ffn = _test(results["token_blind"], FFN_TOKEN)
    assert ffn["status"] == "failed"
    assert ffn["output"].startswith("The output of token 2 did not change when token 2 did")
    mha = _test(results["token_blind"], MHA_PERMUTING)
    assert mha["status"] == "failed"
    assert mha["output"].startswith("Permuting the tokens of x left every output where it was")
    # the reference passes all four (tests/examples/test_example_scores.py grades it at full marks)
