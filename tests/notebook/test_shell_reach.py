"""The static check of a learner's notebook cells for reaches into the IPython shell.

The red team's notebook (an input transformer in the lookup answer cell that turns every test
cell into a print of its base64 source) scored 20/20 with nothing implemented and handed the
hidden tests back in notebook.graded.ipynb. Now it is refused before the run: every test fails
with one sentence naming the cell and line, each reach is a review flag that reaches the grade
(and so the gradebook's review column), and no graded copy is written. The course's valid
notebooks have no reach (their full marks are test_pipeline.py's).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason="needs the notebook extra: pip install -e '.[notebook]'")

from autograder.config import load_course  # noqa: E402
from autograder.notebook.autograde import SHELL_FLAG, SHELL_REACHED, grade_notebooks  # noqa: E402
from autograder.notebook.course import cell_label, only_assignment  # noqa: E402
from autograder.notebook.shell_reach import UNREADABLE, cell_reaches, shell_reaches  # noqa: E402
from autograder.results import REVIEW_LINE, NotebookPart, ReviewFlag, build_grade  # noqa: E402
from tests.notebook.conftest import EXAMPLES, LEARNER_PATH, ROOT, SOURCE  # noqa: E402
from tests.notebook.probes import LEAK, XFORM  # noqa: E402

LOOKUP_LABEL = '"def lookup(vectors, words):" in section 2, "Look words up" (lookup)'
TRANSFORMER = "get_ipython().input_transformers_cleanup"


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _shell_notebook() -> dict:
    """The untouched notebook whose lookup answer cell ends with the input transformer."""
    document = _read(EXAMPLES / "untouched" / LEARNER_PATH)
    for cell in document["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "lookup":
            cell["source"] = "".join(cell["source"]) + "\n" + XFORM
    return document


def _lookup_lines(document: dict) -> int:
    (cell,) = [c for c in document["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id")
               == "lookup"]  # fmt: skip
    return len("".join(cell["source"]).splitlines())


@pytest.mark.parametrize("name", ["correct", "untouched", "broken", "hanging"])
def test_the_course_examples_reach_nothing(name):
    assert shell_reaches(_read(EXAMPLES / name / LEARNER_PATH), _read(SOURCE)) == []


def test_the_input_transformer_is_found_at_its_cell_and_line():
    document = _shell_notebook()
    (reach,) = shell_reaches(document, _read(SOURCE))
    assert (reach.label, reach.line, reach.what) == (
        LOOKUP_LABEL,
        _lookup_lines(document),
        TRANSFORMER,
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("%matplotlib inline\nx = 1\n", []),
        ("%%time\nimport IPython\n", [(2, "import IPython")]),
        ("%run helper.py\n", [(1, "the IPython shell's %run")]),
        ("!ls /\n", [(1, "the IPython shell's !ls /")]),
        ("get_ipython().set_custom_exc((Exception,), f)\n", [(1, "get_ipython().set_custom_exc")]),
        ("ip = get_ipython()\nip.events.register('pre_run_cell', f)\n",
         [(1, "get_ipython"), (2, "ip.events")]),
        ("import sys\nsys.modules['numpy'] = None\n", [(2, "sys.modules")]),
        ("import builtins\nbuiltins.print = f\n", [(1, "import builtins")]),
        ("x = eval('1')\n", [(1, "eval")]),
        ("f = getattr(obj, name)\n", [(1, "getattr with a computed name")]),
        ("import __main__\n", [(1, "import __main__")]),
        ("print('\\n'.join(In))\n", [(1, "In")]),
        ("def f(:\n", []),  # the kernel refuses it the same way
    ],
)  # fmt: skip
def test_each_kind_of_reach_is_named_with_its_line(source, expected):
    assert cell_reaches(source) == expected


def test_a_cell_unreadable_without_ipython_is_a_reach(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "IPython.core.inputtransformer2", None)
    assert cell_reaches("%run x.py\n") == [(1, UNREADABLE)]


def test_the_shell_notebook_scores_zero_with_a_flag_and_no_graded_copy(tmp_path):
    assignment = only_assignment(ROOT)
    shell, history = tmp_path / "shell.ipynb", tmp_path / "history.ipynb"
    document = _shell_notebook()
    shell.write_text(json.dumps(document), encoding="utf-8")
    leaking = _read(EXAMPLES / "correct" / LEARNER_PATH)
    leaking["cells"].append({"cell_type": "code", "execution_count": None, "id": "leak",
                             "metadata": {}, "outputs": [], "source": LEAK})  # fmt: skip
    history.write_text(json.dumps(leaking), encoding="utf-8")
    keep = tmp_path / "feedback"
    graded = grade_notebooks(assignment, {"shell": shell, "history": history}, keep=keep)

    line = _lookup_lines(document)
    message = SHELL_REACHED.format(label=LOOKUP_LABEL, line=line, what=TRANSFORMER, more="")
    assert [(t.status, t.message, t.error_kind) for t in graded["shell"].tests] == [
        ("failed", message, "tamper")
    ] * 6
    assert message.startswith(
        f"Your notebook's cell {LOOKUP_LABEL} reaches into the IPython shell or kernel at line "
        f"{line} ({TRANSFORMER}), which no answer needs"
    )
    path = LEARNER_PATH.as_posix()
    flag = ReviewFlag(path, line, TRANSFORMER, SHELL_FLAG.format(
        path=path, label=LOOKUP_LABEL, line=line, what=TRANSFORMER))  # fmt: skip
    assert graded["shell"].review == [flag]
    label = cell_label(leaking["cells"], len(leaking["cells"]) - 1)
    assert {t.message for t in graded["history"].tests} == {
        SHELL_REACHED.format(label=label, line=1, what="In", more="")
    }
    assert not keep.exists() or list(keep.iterdir()) == []  # no graded copy handed back

    config = load_course(ROOT / "course.toml")
    part = NotebookPart("notebook", "Notebook", assignment.points, tuple(graded["shell"].tests),
                        review=tuple(graded["shell"].review))  # fmt: skip
    grade = build_grade(config, [], submission="s", seed=0, hidden_included=True, notebooks=[part])
    assert (grade.score, grade.review) == (0.0, (flag,))
    assert f"{REVIEW_LINE} {flag.sentence}" in grade.summary_text()


def test_every_reach_of_a_cell_is_listed_in_line_order():
    reaches = shell_reaches(
        {"cells": [{"cell_type": "code", "metadata": {}, "source": "get_ipython()\nx = In\n"}]},
        {"cells": []},
    )
    assert [(r.line, r.what) for r in reaches] == [(1, "get_ipython"), (2, "In")]
