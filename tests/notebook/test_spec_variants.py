"""The spec is what is graded: every valid form the notebook's instructions allow passes its test
cells, and each planted mistake fails the cells it breaks with a message naming its real cause.

The source notebook runs in-process (no kernel, the toy vectors: fast), its hidden tests
included, with one solution function replaced after its cell; each test cell's exception is
recorded. The real pipeline (test_pipeline.py) grades a few of these through nbgrader.
"""

from __future__ import annotations

import contextlib
import io

import pytest

pytest.importorskip("gensim", reason="needs the notebook extra: pip install -e '.[notebook]'")
pytest.importorskip("matplotlib", reason="needs the notebook extra: pip install -e '.[notebook]'")

import matplotlib  # noqa: E402

from tests.notebook.conftest import SOURCE, TOY_VECTORS  # noqa: E402
from tests.notebook.test_source import cells, nbgrader, source  # noqa: E402

matplotlib.use("Agg")
TESTS = [
    "test_lookup", "test_shapes", "test_rows", "test_course_numbers", "test_bank", "test_plots"
]  # fmt: skip

BARH = """
def plot_cosines(cosines):
    fig, ax = plt.subplots()
    ax.barh(range(len(cosines)), list(cosines.values()))
    ax.set_yticks(range(len(cosines)), labels=list(cosines))
    return fig
"""
CATEGORICAL_BARS = """
def plot_cosines(cosines):
    fig, ax = plt.subplots()
    ax.bar(list(cosines), list(cosines.values()))
    return fig
"""
MATSHOW = """
def plot_attention(A, words):
    fig, ax = plt.subplots()
    image = ax.matshow(A, cmap="magma")
    ax.set_xticks(range(len(words)), labels=words)
    ax.set_yticks(range(len(words)), labels=words)
    fig.colorbar(image, ax=ax)
    return fig
"""
PCOLORMESH = """
def plot_attention(A, words):
    fig, ax = plt.subplots()
    mesh = ax.pcolormesh(A, cmap="plasma")
    ax.set_xticks([i + 0.5 for i in range(len(words))], labels=words)
    ax.set_yticks([i + 0.5 for i in range(len(words))], labels=words)
    ax.invert_yaxis()
    fig.colorbar(mesh, ax=ax)
    return fig
"""
TRANSPOSED = MATSHOW.replace("ax.matshow(A,", "ax.matshow(A.T,")
UNLABELLED_BARS = """
def plot_cosines(cosines):
    fig, ax = plt.subplots()
    ax.bar(range(len(cosines)), list(cosines.values()))
    return fig
"""
SOFTMAX_AXIS_0 = """
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)
"""
DRAW_ORDER = """
def init_projections(d_model, seed=1, scale=0.5):
    rng = np.random.default_rng(seed)
    W_q, W_k, W_v = (rng.normal(scale=scale, size=(d_model, d_model)) for _ in range(3))
    return W_k, W_q, W_v
"""
NO_SCALE = """
def attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ K.T
    A = softmax(scores, axis=-1)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "A": A, "Y": A @ V}
"""


def run_tests(replaced: dict[str, str], monkeypatch) -> dict[str, str]:
    """Every code cell of the source notebook on the toy vectors, the code in `replaced` run
    after the cell of that grade_id; {test cell: its error ('' when it passed)}."""
    monkeypatch.chdir(SOURCE.parent)
    namespace = {"__name__": "__main__"}
    outcome = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in cells():
            if cell["cell_type"] != "code":
                continue
            grade_id = nbgrader(cell).get("grade_id", "")
            toy = f"VECTORS_SOURCE = {str(TOY_VECTORS)!r}"
            code = source(cell).replace("VECTORS_SOURCE = None", toy)
            code += "\n" + replaced.get(grade_id, "")
            try:
                exec(compile(code, grade_id or "cell", "exec"), namespace)
            except Exception as error:  # a test cell's failure is the outcome
                if grade_id not in TESTS:
                    raise
                outcome[grade_id] = f"{type(error).__name__}: {error}"
            else:
                if grade_id in TESTS:
                    outcome[grade_id] = ""
    return outcome


@pytest.mark.parametrize(
    "cell, code",
    [
        ("plots", BARH),
        ("plots", CATEGORICAL_BARS),
        ("plots", MATSHOW),
        ("plots", PCOLORMESH),
    ],
    ids=["horizontal bars", "bars on a categorical axis", "matshow", "pcolormesh"],
)
def test_every_valid_form_of_the_plots_passes_every_test(cell, code, monkeypatch):
    """The issue: a horizontal bar chart lost test_plots, read as 'Expected bars [0.5, -0.25]
    in order; got [0.8, 0.8]' (the bars' thickness)."""
    assert run_tests({cell: code}, monkeypatch) == dict.fromkeys(TESTS, "")


@pytest.mark.parametrize(
    "cell, code, failing",
    [
        (
            "attention",
            SOFTMAX_AXIS_0,
            {"test_rows": "Each row of A must sum to 1 (softmax over the keys, axis=-1).",
             "test_course_numbers": "each row of A should sum to 1: the softmax runs over the "
             "keys (axis=-1), one row per query."},
        ),
        ("attention", DRAW_ORDER, {"test_course_numbers": "should draw W_q as in class"}),
        (
            "attention",
            NO_SCALE,
            {"test_rows": "scores should be Q @ K.T / sqrt(d_k).",
             "test_course_numbers": "scores should be Q @ K.T / sqrt(d_k), with Q = X @ W_q"},
        ),
        ("plots", TRANSPOSED, {"test_plots": "The heat map should show A itself"}),
        ("plots", UNLABELLED_BARS, {"test_plots": "Label each bar with its key"}),
    ],
    ids=["softmax over the queries", "projections drawn in another order", "no scaling",
         "heat map of A transposed", "bars without their keys"],
)  # fmt: skip
def test_each_planted_mistake_fails_its_cells_naming_its_cause(cell, code, failing, monkeypatch):
    """The issue: a softmax over the wrong axis read 'check the seed and draw order'."""
    outcome = run_tests({cell: code}, monkeypatch)
    assert {name for name, error in outcome.items() if error} == set(failing), outcome
    for name, cause in failing.items():
        assert cause in outcome[name], outcome[name]
    assert not any("seed and draw order" in error for error in outcome.values())
