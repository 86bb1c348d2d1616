"""A module registered under two names inside one encoder layer (W_q kept as W_q and as
query.linear, as an adaptation of labml's PrepareForMultiHeadAttention may do) is not named
[encoder/shared-layer]: the layers share nothing, so the encoder's feedback says only that
two names hold one parameter. (The shared-layer mutant of `autograder check` proves that a
layer really put twice in the stack is still named.)"""

from __future__ import annotations

from tests.graders.support.catalogue import mistake

from .edited import grade_one_edit

ALIAS = {
    "multi_head_attention.py": [
        (
            "self.dropout = nn.Dropout(dropout)\n",
            "self.dropout = nn.Dropout(dropout)\n        self.query = nn.Module()\n"
            "        self.query.linear = self.W_q\n",
        )
    ]
}


def test_an_alias_inside_one_layer_is_not_called_a_shared_layer(tmp_path):
    results = grade_one_edit(tmp_path, "alias", ALIAS, "encoder")
    failed = [t for t in results["tests"] if t["score"] < t["max_score"]]
    separate = [t for t in failed if "separate" in t["name"]]
    assert separate, [t["name"] for t in failed]
    for test in separate:
        assert "one and the same parameter" in test["output"], test["output"]
        assert mistake("encoder/shared-layer").split(" ")[0] not in test["output"]
