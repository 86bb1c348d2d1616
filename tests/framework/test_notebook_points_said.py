"""Every place that states the notebook's points says the same true thing: the autograded
cells' points (the component `notebook`, on top of the modules' total) and the written answer
graded by hand, apart from it. The numbers come from the source notebook's nbgrader cells."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.config import load_course
from autograder.notebook.course import only_assignment

ROOT = Path(__file__).resolve().parents[2]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_notebook_points_are_twenty_autograded_and_five_by_hand() -> None:
    notebook = only_assignment(ROOT)
    assert (notebook.points, notebook.manual_points) == (20.0, 5.0)
    modules = sum(c.points for c in load_course(ROOT / "course.toml").components)
    assert modules == 100


def test_docs_course_toml_and_the_notebook_say_the_same_points() -> None:
    notebook = only_assignment(ROOT)
    docs = _flat((ROOT / "docs" / "instructor" / "notebook.md").read_text(encoding="utf-8"))
    assert "The autograded cells total **20 points**" in docs
    assert "a submission with the notebook is graded out of **120**" in docs
    assert "The written answer (5 points) is graded by hand in nbgrader: until then" in docs
    assert "Once graded, `gradebook.csv` adds it (out of **125**)." in docs
    assert "| `written_answer` | 5 | graded by hand" in docs
    lines = (ROOT / "course.toml").read_text(encoding="utf-8").splitlines()
    toml = _flat(" ".join(line.lstrip("# ") for line in lines))  # its comments, one text
    assert (
        "With it the course totals 120. Its written answer (5 points) is graded by hand in "
        "nbgrader, pending until then; gradebook.csv adds it (notebook_by_hand) once graded: 125."
    ) in toml
    cells = json.loads(notebook.source_notebook.read_text(encoding="utf-8"))["cells"]
    text = _flat(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"))
    assert (
        "These cells make 20 points. Your written answer at the end (5 points) is graded by hand "
        "by your instructor: your grade shows it as pending, apart from the 20 points, until it "
        "is graded." in text
    )
    assert "## 6. What do the numbers show? (5 points, graded by hand by your instructor)" in text
