"""The written answer in the class's loop (autograder/notebook/class_gradebook.py, hand_grades.py):
a gradebook rebuild brings each learner's graded notebook into the class's kept nbgrader folder
DIR/nbgrader, where the instructor grades the written answer by hand; the next rebuild reads the
score into gradebook.csv's `notebook_by_hand` column and the row's total.

No kernel runs: learners' folders are made here as grade-class leaves them (record.json,
results.json, notebook.graded.ipynb); nbgrader's own generate_assignment and Gradebook API
prepare and read DIR/nbgrader, and a score is set through that API as formgrader sets it.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason="needs the notebook extra: pip install -e '.[notebook]'")

from nbgrader.api import Gradebook  # noqa: E402

from autograder.config import load_course  # noqa: E402
from autograder.gradebook.class_output import rebuild  # noqa: E402
from autograder.gradebook.store import LearnerRecord  # noqa: E402
from autograder.notebook import class_gradebook  # noqa: E402
from autograder.notebook.course import only_assignment  # noqa: E402
from tests.notebook.conftest import EXAMPLES, LEARNER_PATH, ROOT  # noqa: E402

SCORES = {"test_lookup": 4, "test_shapes": 3, "test_rows": 3, "test_course_numbers": 3}
SCORES |= {"test_bank": 4, "test_plots": 0}  # 17 of 20
IDS = ("contextual_vectors", "contextual_vectors")
ANSWER = "With GloVe 6B 50-d (width 50) the raw bank cosine is 1.0 and the contextual one lower."


def learner_folder(out: Path, learner: str, answer: str = ANSWER, html: bool = False) -> None:
    """DIR/<learner> as grade-class leaves it for a learner with the notebook (17 of 20)."""
    folder = out / learner
    folder.mkdir(parents=True, exist_ok=True)
    document = json.loads((EXAMPLES / "correct" / LEARNER_PATH).read_text(encoding="utf-8"))
    for cell in document["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade_id") == "written_answer":
            cell["source"] = answer
        if meta.get("grade_id") == "run_plots" and html:
            cell["outputs"] = [
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {
                        "text/html": "<script>steal()</script>",
                        "application/javascript": "steal()",
                        "text/plain": "<Figure>",
                    },
                }
            ]
    (folder / "notebook.graded.ipynb").write_text(json.dumps(document), encoding="utf-8")
    tests = [
        {
            "name": f"Notebook: contextual vectors: {name}",
            "score": float(score),
            "tags": ["notebook"],
        }
        for name, score in SCORES.items()
    ]
    (folder / "results.json").write_text(json.dumps({"tests": tests}), encoding="utf-8")
    record = LearnerRecord(
        learner,
        components={"softmax": 10.0, "notebook": 17.0},
        total=27.0,
        max_score=120.0,
        graded_at="2026-12-02T10:00:00+00:00",
    )
    (folder / "record.json").write_text(record.to_json(), encoding="utf-8")


def grade_by_hand(out: Path, learner: str, score: float) -> None:
    """What formgrader does when the instructor scores the written answer."""
    with Gradebook(f"sqlite:///{out / 'nbgrader' / 'gradebook.db'}") as gradebook:
        gradebook.find_grade("written_answer", *IDS, learner).manual_score = score
        gradebook.db.commit()


def rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "gradebook.csv").open(encoding="utf-8") as stream:
        return {row["learner"]: row for row in csv.DictReader(stream)}


@pytest.fixture(scope="module")
def config():
    return load_course(ROOT / "course.toml")


def test_a_rebuild_brings_learners_in_pending_and_a_hand_grade_completes_the_total(
    config, tmp_path
):
    out = tmp_path / "class"
    learner_folder(out, "ada")
    learner_folder(out, "bo")
    rebuild(config, out, None)
    with Gradebook(f"sqlite:///{out / 'nbgrader' / 'gradebook.db'}") as gradebook:
        assert sorted(s.id for s in gradebook.students) == ["ada", "bo"]
        assert gradebook.find_grade("test_bank", *IDS, "ada").auto_score == 4.0
        assert gradebook.find_grade("test_plots", *IDS, "ada").auto_score == 0.0
        written = gradebook.find_grade("written_answer", *IDS, "ada")
        assert (written.manual_score, written.needs_manual_grade) == (None, True)
    assert (out / "nbgrader" / "autograded" / "ada" / "contextual_vectors").is_dir()
    header = (out / "gradebook.csv").read_text(encoding="utf-8").splitlines()[0]
    assert ",encoder,notebook,notebook_by_hand,total,max_score," in header
    got = {
        name: (r["notebook_by_hand"], r["total"], r["max_score"]) for name, r in rows(out).items()
    }
    assert got == {"ada": ("", "27.00", "120.00"), "bo": ("", "27.00", "120.00")}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert (
        "2 of the 2 learners with Notebook: contextual vectors wait for the answers graded by "
        f"hand: grade them in nbgrader's formgrader, started in {out / 'nbgrader'} (`jupyter "
        "lab`, then Nbgrader > Formgrader > Manual Grading), then run this command again to "
        "bring the scores into gradebook.csv." in report
    )

    grade_by_hand(out, "ada", 4.0)
    rebuild(config, out, None)
    got = {
        name: (r["notebook_by_hand"], r["total"], r["max_score"]) for name, r in rows(out).items()
    }
    assert got == {"ada": ("4.00", "31.00", "125.00"), "bo": ("", "27.00", "120.00")}
    assert "1 of the 2 learners with Notebook: contextual vectors waits for" in (
        out / "report.md"
    ).read_text(encoding="utf-8")


def test_a_regraded_notebook_keeps_its_hand_grade_unless_the_answer_changed(config, tmp_path):
    out = tmp_path / "class"
    learner_folder(out, "ada")
    learner_folder(out, "bo")
    rebuild(config, out, None)
    grade_by_hand(out, "ada", 5.0)
    grade_by_hand(out, "bo", 3.0)
    learner_folder(out, "ada", html=True)  # graded again: other outputs, the same answer
    learner_folder(out, "bo", answer="A new answer, written after the first grading.")
    rebuild(config, out, None)
    got = {name: r["notebook_by_hand"] for name, r in rows(out).items()}
    assert got == {"ada": "5.00", "bo": ""}


def test_formgrader_is_shown_no_html_or_script_a_learner_printed(config, tmp_path):
    out = tmp_path / "class"
    learner_folder(out, "ada", html=True)
    rebuild(config, out, None)
    shown = (out / "nbgrader" / "autograded" / "ada" / "contextual_vectors").glob("*.ipynb")
    text = next(shown).read_text(encoding="utf-8")
    assert "steal()" not in text and '"text/plain": "<Figure>"' in text
    config_text = (out / "nbgrader" / "nbgrader_config.py").read_text(encoding="utf-8")
    assert "c.HTMLExporter.sanitize_html = True" in config_text


def test_merge_carries_the_hand_grades_of_each_shard(config, tmp_path):
    shard = tmp_path / "shard1"
    learner_folder(shard, "ada")
    rebuild(config, shard, None)
    grade_by_hand(shard, "ada", 4.5)
    out = tmp_path / "merged"
    shutil.copytree(shard / "ada", out / "ada")
    class_gradebook.carry(only_assignment(ROOT), out, {"ada": shard})
    rebuild(config, out, None)
    assert rows(out)["ada"]["notebook_by_hand"] == "4.50"
