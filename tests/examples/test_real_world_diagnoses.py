"""Real-world code gets the diagnosis its code has, no other (issue: one message in three about a
real deviation named a cause the code does not have). Each learner below is the reference with
what a public implementation does (solutions/corpus), graded end to end; the sentences are
asserted exactly:

* Add & Norm with a hard-coded eps=1e-6 and no dropout: the numeric tests that fail name the eps,
  never "the dropout touched x", and the train-mode test says no dropout is applied;
* the unbiased standard deviation, with eps inside the square root or added to it: named in
  either order of operations;
* a LayerNorm class of the learner's own: the contract's sentence, never an AttributeError, and
  only the parameter test lost;
* multi-head attention whose dropout acts on the weights but which returns the weights from
  before it (d2l, bentrevett): "weights before dropout", not "dropout on the output";
* an extra dropout on the output (nanoGPT's resid_dropout): "dropout on the output", not "use
  the weights after the dropout", which it does;
* a (B, L, S) mask used without its head axis: named, not "fill the scores with -inf";
* an Encoder with a final LayerNorm of its own, its Add & Norm failing too: the final norm named,
  never "Fix Add & Norm first".

Each named mistake points to the learner's line that makes it (`at`).
"""

from __future__ import annotations

import pytest

from tests.graders.support.catalogue import mistake

from .edited import component_scores, edited_reference, grade, grade_one_edit

LEARNERS = {
    "eps6": {
        "add_norm.py": [
            (
                "self.norm = nn.LayerNorm(d_model, eps=eps)",
                "self.norm = nn.LayerNorm(d_model, eps=1e-6)",
            ),
            (
                "return self.norm(x + self.dropout(sublayer_output))",
                "return self.norm(x + sublayer_output)",
            ),
        ]
    },
    "std_plus_eps": {
        "add_norm.py": [
            (
                "return self.norm(x + self.dropout(sublayer_output))  # (..., d_model)",
                "z = x + self.dropout(sublayer_output)\n"
                "        std = z.std(-1, keepdim=True)\n"
                "        n = self.norm\n"
                "        return n.weight * (z - z.mean(-1, keepdim=True)) / (std + n.eps) + n.bias",
            )
        ]
    },
    "unbiased_var": {
        "add_norm.py": [
            (
                "return self.norm(x + self.dropout(sublayer_output))  # (..., d_model)",
                "z = x + self.dropout(sublayer_output)\n"
                "        var = z.var(-1, keepdim=True)\n"
                "        n = self.norm\n"
                "        z = (z - z.mean(-1, keepdim=True)) / torch.sqrt(var + n.eps)\n"
                "        return z * n.weight + n.bias",
            )
        ]
    },
    "own_layer_norm": {
        "add_norm.py": [
            (
                "class AddNorm(nn.Module):",
                "class LayerNorm(nn.Module):\n"
                "    def __init__(self, d_model, eps):\n"
                "        super().__init__()\n"
                "        self.gamma = nn.Parameter(torch.ones(d_model))\n"
                "        self.beta = nn.Parameter(torch.zeros(d_model))\n"
                "        self.eps = eps\n\n"
                "    def forward(self, z):\n"
                "        var = z.var(-1, unbiased=False, keepdim=True)\n"
                "        z = (z - z.mean(-1, keepdim=True)) / torch.sqrt(var + self.eps)\n"
                "        return self.gamma * z + self.beta\n\n\n"
                "class AddNorm(nn.Module):",
            ),
            ("self.norm = nn.LayerNorm(d_model, eps=eps)", "self.norm = LayerNorm(d_model, eps)"),
        ]
    },
    "weights_before_dropout": {
        "multi_head_attention.py": [
            ("        weights = self.dropout(weights)\n", ""),
            ("heads = weights @ V  # (B, h, L, d_k)", "heads = self.dropout(weights) @ V"),
        ]
    },
    "output_dropout_too": {
        "multi_head_attention.py": [
            ("return self.W_o(concat), weights", "return self.dropout(self.W_o(concat)), weights"),
        ]
    },
    "no_head_axis": {
        "multi_head_attention.py": [
            ("mask = mask.unsqueeze(1)  # (B, 1, L, S)", "mask = mask  # (B, L, S)")
        ]
    },
}
TRAIN_ADD_NORM = "AddNorm(8, dropout=0.25)(x, sublayer_output) with both (3, 4, 8)"
TRAIN_MHA = "MultiHeadAttention(16, 4, dropout=0.25)(x, x, x) with x (2, 5, 16)"


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("real_world")
    learners = [edited_reference(base / name, edits) for name, edits in LEARNERS.items()]
    return grade(learners, base / "grades", "add_norm", "multi_head_attention")


def at(mistake_id: str, file: str, line: int, what: str) -> str:
    """The catalogue's sentence for mistake_id with the learner's line before its "Read:"."""
    where = f"Look at assignments/t101/{file}:{line}, {what}."
    text = mistake(mistake_id)
    assert text.count(" Read: course notes") == 1, text
    return text.replace(" Read: course notes", f" {where} Read: course notes")


def failed(results: dict, component: str) -> dict[str, str]:
    """{test name: message} of the component's failing tests."""
    return {
        t["name"].split(": ", 1)[1]: t["output"]
        for t in results["tests"]
        if t["tags"] == [component] and t["status"] != "passed"
    }


def test_a_hard_coded_eps_is_named_and_no_dropout_is_said_so(graded):
    messages = failed(graded["eps6"], "add_norm")
    train = messages.pop(
        "in train mode, dropout drops entries of the sublayer output only, before the addition"
    )
    assert train == (
        f"{TRAIN_ADD_NORM} in train mode gives its eval-mode output: no dropout is applied. "
        + mistake("add_norm/dropout-missing")
    )
    assert messages, "the eps tests fail"
    for name, message in messages.items():
        assert "[add_norm/eps-ignored]" in message, name
        assert "touched x" not in message and "largest absolute error" not in message, name


@pytest.mark.parametrize("learner", ["std_plus_eps", "unbiased_var"])
def test_an_unbiased_std_is_named_in_either_order(graded, learner):
    messages = failed(graded[learner], "add_norm")
    two_d = messages["equals LayerNorm(x + sublayer_output) (post-norm) [2d]"]
    assert two_d.startswith(
        "Known mistake in AddNorm(8)(x, sublayer_output) with both (5, 8): "
        + at("add_norm/unbiased-variance", "add_norm.py", 42, "the line that takes the deviation")
    )
    for name, message in messages.items():
        assert "[add_norm/unbiased-variance]" in message, name


def test_a_layer_norm_class_of_ones_own_costs_the_parameter_test_only(graded):
    results = graded["own_layer_norm"]
    assert failed(results, "add_norm") == {
        "has one LayerNorm called norm, with weight and bias (d_model,)": (
            "AddNorm(8) has the wrong parameters: it lacks norm.bias, norm.weight; it also has "
            "norm.gamma, norm.beta, which the contract does not. Expected exactly: norm.bias "
            "(8,), norm.weight (8,). "
            + at("add_norm/custom-layer-norm", "add_norm.py", 46, "the line that creates the norm")
        )
    }
    assert component_scores(results)["add_norm"] == pytest.approx(9.5)


@pytest.mark.parametrize(
    "learner, slug, line, what",
    [
        ("weights_before_dropout", "weights-before-dropout", 100, "the return line"),
        ("output_dropout_too", "dropout-on-output", 101, "the line of the dropout"),
    ],
)
def test_where_the_attention_dropout_acts_is_told_from_the_output(
    graded, learner, slug, line, what
):
    messages = failed(graded[learner], "multi_head_attention")
    assert messages == {
        "in train mode, drops attention weights (scaling the kept ones by 1/(1-p)) and uses them": (
            f"In train mode, {TRAIN_MHA}: "
            + at(f"multi_head_attention/{slug}", "multi_head_attention.py", line, what)
        )
    }


def test_a_mask_without_its_head_axis_is_named_not_told_to_fill_with_minus_inf(graded):
    messages = failed(graded["no_head_axis"], "multi_head_attention")
    assert messages
    for name, message in messages.items():
        assert "[multi_head_attention/mask-no-head-axis]" in message, name
        assert "fill the scores where the mask is False" not in message, name


LAYERS = "EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)\n        )\n"
FINAL_NORM = {
    "add_norm.py": LEARNERS["eps6"]["add_norm.py"],
    "encoder.py": [
        (LAYERS, LAYERS + "        self.norm = nn.LayerNorm(d_model)\n"),
        (
            "            x = layer(x, mask)  # (B, L, d_model)\n        return x",
            "            x = layer(x, mask)  # (B, L, d_model)\n        return self.norm(x)",
        ),
    ],
}


def test_an_encoders_own_final_norm_is_named_not_add_norm(tmp_path):
    """The Annotated Transformer's Encoder ends with a LayerNorm of its own, and its Add & Norm
    fails too (a hard-coded eps): the encoder's failures are its final norm, named, never "Fix
    Add & Norm first" (its graders ran the stand-ins, not the learner's AddNorm)."""
    results = grade_one_edit(tmp_path, "final_norm", FINAL_NORM, "add_norm", "encoder")
    assert failed(results, "add_norm"), "its Add & Norm fails too"
    messages = failed(results, "encoder")
    assert messages
    for name, message in messages.items():
        assert "Fix Add & Norm first" not in message, name
        assert "first:" not in message, name
    for name, message in messages.items():
        assert "[encoder/final-norm]" in message, name
    assert messages["Encoder(1, ...) equals its one layer"] == (
        "Known mistake in Encoder(...)(x): "
        + at("encoder/final-norm", "encoder.py", 94, "the line that creates the final norm")
    )
