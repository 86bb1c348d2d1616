"""A known mistake points to the learner's line (tests/graders/support/locations.py): on every
mutant of the course, planted or real-world, the place given is the line that holds the mistake,
or none when the source does not show it; never a line of another function."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.mistakes import course_catalogue
from autograder.mistakes.mutants import load_mutants, write_mutant
from tests.graders.support.locations import PLACES, WHERE, place_of

ROOT = Path(__file__).resolve().parents[2]
CONFIG = load_course(ROOT / "course.toml")
MUTANTS = {
    m.label: m for m in load_mutants(CONFIG.course.mutants, CONFIG, course_catalogue(CONFIG))
}

#: (mutant, mistake, the message's call) -> the text of the line given, or None.
EXPECTED = {
    ("attention/scale-by-d-k", "attention/scale-by-d-k", "scaled_dot_product_attention(Q, K, V)"): (
        "scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]  # (..., L, S)"
    ),
    (
        "attention/float32-inside",
        "attention/float32-inside",
        "scaled_dot_product_attention(Q, K, V)",
    ): ("scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(np.float32(K.shape[-1]))  # (..., L, S)"),
    (
        "attention/mask-fill-zero",
        "attention/mask-fill-zero",
        "scaled_dot_product_attention(Q, K, V, mask)",
    ): ("scores = np.where(np.asarray(mask, dtype=bool), scores, 0.0)  # (..., L, S)"),
    (
        "attention/no-shape-check",
        "attention/no-shape-check",
        "scaled_dot_product_attention(Q, K, V)",
    ): None,
    (
        "multi_head_attention/split-without-transpose",
        "multi_head_attention/split-without-transpose",
        "MultiHeadAttention(16, 4)(x, x, x)",
    ): ("return x.view(B, self.num_heads, T, self.d_k)  # (B, h, T, d_k)"),
    (
        "multi_head_attention/merge-without-transpose",
        "multi_head_attention/merge-without-transpose",
        "MultiHeadAttention(16, 4)(x, x, x)",
    ): ("concat = heads.reshape(B, L, d_model)  # (B, L, h * d_k)"),
    (
        "multi_head_attention/nanogpt",
        "multi_head_attention/dropout-on-output",
        "MultiHeadAttention(16, 4)(x, x, x)",
    ): ("y = self.resid_dropout(self.W_o(y))"),
    (
        "multi_head_attention/hyunwoongko",
        "multi_head_attention/mask-no-head-axis",
        "MultiHeadAttention(16, 4)(x, x, x, mask)",
    ): (
        "score = score.masked_fill(mask == 0, -10000)"  # in its own attention class
    ),
    (
        "add_norm/annotated-transformer",
        "add_norm/unbiased-variance",
        "AddNorm(8)(x, sublayer_output)",
    ): (
        "std = x.std(-1, keepdim=True)"  # in its own LayerNorm class
    ),
    ("encoder/raschka", "encoder/final-norm", "Encoder(3, 8, 2, 16)(x)"): (
        "self.final_norm = nn.LayerNorm(d_model)"
    ),
}


def _given_line(mutant_label, mistake, message, tmp_path) -> str | None:
    package = write_mutant(MUTANTS[mutant_label], CONFIG.course.reference_dir, tmp_path / "pkg")
    place = place_of(mistake, f"Known mistake in {message}: [{mistake}] ...", package, "a/t101")
    if place is None:
        return None
    path, line = place.removeprefix("Look at ").split(",")[0].rsplit(":", 1)
    assert path == f"a/t101/{PLACES[mistake].module}.py"
    assert place == WHERE.format(path=path, line=line, what=PLACES[mistake].what)
    return (package / Path(path).name).read_text().splitlines()[int(line) - 1].strip()


@pytest.mark.parametrize("case", list(EXPECTED), ids=lambda c: f"{c[0]}:{c[1]}")
def test_the_place_given_is_the_line_of_the_mistake(case, tmp_path):
    assert _given_line(*case, tmp_path) == EXPECTED[case]


def test_the_call_the_message_names_is_searched_first(tmp_path):
    """attention.py has two scalings (the NumPy function's, SelfAttention's): a SelfAttention
    test is pointed at SelfAttention's line, a NumPy test at the function's, never the other."""
    label = "attention/scale-by-d-k"  # the NumPy function divides by d_k; SelfAttention is right
    numpy_line = _given_line(label, label, "scaled_dot_product_attention(Q, K, V)", tmp_path)
    assert numpy_line == "scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]  # (..., L, S)"
    torch_line = _given_line(label, label, "SelfAttention(8, 4, 6)(x)", tmp_path / "2")
    assert torch_line == "scores = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5  # (..., L, L)"


def test_a_file_that_does_not_parse_gives_no_place(tmp_path):
    (tmp_path / "attention.py").write_text("def scaled_dot_product_attention(:\n")
    assert place_of("attention/no-scale", "", tmp_path, "a/t101") is None
    assert place_of("attention/no-scale", "", tmp_path / "missing", "a/t101") is None


def test_a_module_that_is_a_link_is_not_read_through(tmp_path):
    """The harness reads the learner's source without following a link out of the package: an
    attention.py linked to a file elsewhere (the reference, say) gives no place, and says
    nothing of the file it points to."""
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("def scaled_dot_product_attention(Q, K, V):\n    return Q @ K.T\n")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "attention.py").symlink_to(elsewhere)
    message = "Known mistake in scaled_dot_product_attention(Q, K, V): [attention/no-scale] ..."
    assert place_of("attention/no-scale", message, package, "a/t101") is None
    (package / "attention.py").unlink()
    (package / "attention.py").write_text(elsewhere.read_text())
    assert place_of("attention/no-scale", message, package, "a/t101") == WHERE.format(
        path="a/t101/attention.py", line=2, what=PLACES["attention/no-scale"].what
    )


SOFTMAX_SOURCE = """import numpy as np


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return np.exp(x - m) / np.exp(x - m).sum(axis=axis, keepdims=True)
"""


@pytest.mark.parametrize(
    ("imports", "call", "placed"),
    [
        ("from .softmax import softmax", "softmax(scores, axis=-1)", True),
        ("from t101.softmax import softmax as sm", "sm(scores)", True),
        ("from . import softmax", "softmax.softmax(scores)", True),
        ("import t101.softmax", "t101.softmax.softmax(scores)", True),
        (
            "from .softmax import softmax\nfrom scipy.special import softmax as s",
            "s(scores)",
            False,
        ),
        ("from scipy.special import softmax", "softmax(scores)", False),
    ],
    ids=["relative", "absolute-alias", "module", "import", "imported-unused", "scipy"],
)
def test_a_softmax_mistake_in_an_attention_test_names_softmax_py_only_when_attention_calls_it(
    tmp_path, imports, call, placed
):
    """Real-world code: an attention that calls scipy's softmax, which gives NaN on an all -inf
    row, was sent to the line of the learner's own (right) softmax.py. The mistake is still
    named; its place only when attention.py calls the package's softmax."""
    package = tmp_path / "t101"
    package.mkdir()
    (package / "softmax.py").write_text(SOFTMAX_SOURCE)
    (package / "attention.py").write_text(
        f"{imports}\n\n\ndef scaled_dot_product_attention(Q, K, V, mask=None):\n"
        f"    scores = Q @ K.T\n    return {call}\n"
    )
    message = "Known mistake in the weights: [softmax/nan-all-inf] ..."
    place = place_of("softmax/nan-all-inf", message, package, "a/t101", "attention")
    assert place == (
        "Look at a/t101/softmax.py:5, the line that takes the maximum." if placed else None
    )
    assert place_of("softmax/nan-all-inf", message, package, "a/t101", "softmax") is not None
