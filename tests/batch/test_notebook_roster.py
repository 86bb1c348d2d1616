"""A class whose repositories hold the notebook (issue #6): grade-class in two shards, merged.

Three learners with amara's correct modules (100 points): ada with the correct notebook
(20 of 20), bo with the untouched one (0 of 20), cy with no notebook (no notebook grade). The
shards run side by side (ada and cy; bo), each notebook in its own sandboxed nbgrader run.
The instructor then grades ada's written answer (4 of 5) in formgrader, started in shard 1's
kept nbgrader folder; bo's stays pending. The merged gradebook, class report and table must
show the notebook beside the six modules, and the written answer as a column of its own.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.gradebook.report_model import NOT_SUBMITTED
from autograder.notebook.hand_grades import ABSENT
from autograder.runtime.harness import isolation
from tests.batch.conftest import ROOT, read_gradebook, run_cli
from tests.notebook.formgrader import formgrader, grade_by_hand
from tests.notebook.probes import outputs

pytest.importorskip("nbgrader", reason="needs the notebook extra: pip install -e '.[notebook]'")

from nbgrader.api import Gradebook  # noqa: E402

NOTEBOOK = Path("assignments/notebooks/contextual_vectors.ipynb")
EXAMPLES = ROOT / "examples" / "notebooks"
TITLE = "Notebook: contextual vectors"
NOT_DONE = "Replace this line with your code; this step is not done yet."


@pytest.fixture(scope="module")
def merged(tmp_path_factory) -> dict[str, Path | subprocess.CompletedProcess]:
    base = tmp_path_factory.mktemp("notebook_roster")
    roster = base / "class"
    shards = [base / "shard1", base / "shard2"]
    for learner, notebook in (("ada", "correct"), ("bo", "untouched"), ("cy", None)):
        shutil.copytree(ROOT / "examples" / "submissions" / "amara", roster / learner)
        if notebook:
            (roster / learner / NOTEBOOK).parent.mkdir(parents=True)
            shutil.copyfile(EXAMPLES / notebook / NOTEBOOK, roster / learner / NOTEBOOK)
    with_probe(roster / "ada" / NOTEBOOK, shards[0] / ".pycache")  # ada is in shard 1
    elsewhere = tmp_path_factory.mktemp("cwd")
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "autograder", "grade-class", str(roster), "--out", str(out)]
            + ["--course", str(ROOT / "course.toml"), "--shard", f"{i}/2", "--jobs", "1", "-q"],
            cwd=elsewhere,  # not a parent of DIR: a notebook run also hides its current folder
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, out in enumerate(shards, start=1)
    ]
    for run in runs:
        _, err = run.communicate(timeout=900)
        assert run.returncode == 0, err
    with formgrader(shards[0] / "nbgrader", base / "instructor") as url:
        graded = grade_by_hand(url, "ada", "written_answer", 4.0, comment="Both claims, apart.")
    out = base / "merged"
    done = run_cli(
        "merge",
        *map(str, shards),
        "--out",
        str(out),
        "--course",
        str(ROOT / "course.toml"),
        cwd=base,
    )
    return {"out": out, "shard1": shards[0], "merge": done, "graded": graded}


PROBE = 'import json, os\nprint("SEES " + json.dumps({"compiled_graders": os.path.exists(%r)}))\n'


def with_probe(notebook: Path, compiled: Path) -> None:
    """Add to the notebook a cell that says whether its kernel can see `compiled` (DIR/.pycache,
    the batch's compiled hidden graders)."""
    document = json.loads(notebook.read_text(encoding="utf-8"))
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
    document["cells"].insert(4, {**cell, "id": "probe", "source": PROBE % str(compiled)})
    notebook.write_text(json.dumps(document), encoding="utf-8")


def test_a_notebook_cell_cannot_see_the_batch_folder(merged) -> None:
    """H43: a notebook's kernel could read DIR during grade-class: the compiled hidden graders
    in DIR/.pycache and the other learners' reports (module code never could)."""
    if isolation.probe()[0] == isolation.PROCESS_GROUP:
        pytest.skip("this machine allows no namespaces: the run is confined to its process group")
    graded = json.loads((merged["shard1"] / "ada" / "notebook.graded.ipynb").read_text("utf-8"))
    (line,) = [t for t in outputs(graded) if t.startswith("SEES ")]
    assert json.loads(line.removeprefix("SEES ")) == {"compiled_graders": False}
    assert (merged["shard1"] / ".pycache").is_dir()  # it is there, and hidden


def test_the_gradebook_has_a_notebook_column_empty_without_a_notebook(merged) -> None:
    assert merged["merge"].returncode == 0, merged["merge"].stderr
    rows = {row["learner"]: row for row in read_gradebook(merged["out"] / "gradebook.csv")}
    assert list(rows) == ["ada", "bo", "cy"]
    header = (merged["out"] / "gradebook.csv").read_text(encoding="utf-8").splitlines()[0]
    assert ",encoder,notebook,notebook_by_hand,total," in header
    got = {
        name: (r["notebook"], r["notebook_by_hand"], r["total"], r["max_score"])
        for name, r in rows.items()
    }
    assert got == {  # ada's written answer graded (4 of 5), bo's pending, cy without a notebook
        "ada": ("20.00", "4.00", "124.00", "125.00"),
        "bo": ("0.00", "", "100.00", "120.00"),
        "cy": ("", "", "100.00", "100.00"),
    }
    shard = read_gradebook(merged["shard1"] / "gradebook.csv")  # written before it was graded
    assert [(r["learner"], r["notebook"], r["notebook_by_hand"]) for r in shard] == [
        ("ada", "20.00", ""),
        ("cy", "", ""),
    ]


def test_the_written_answer_is_graded_in_formgrader_on_the_class_folder(merged) -> None:
    """The issue: the written answer needed a separate nbgrader pass, the sandbox's gradebook
    being deleted after each run. Formgrader lists ada's graded notebook from the shard's kept
    folder; its score and comment reach the merged class folder."""
    assert merged["graded"]["manual_score"] == 4.0
    with Gradebook(f"sqlite:///{merged['out'] / 'nbgrader' / 'gradebook.db'}") as gradebook:
        ids = ("written_answer", "contextual_vectors", "contextual_vectors")
        assert gradebook.find_grade(*ids, "ada").manual_score == 4.0
        assert gradebook.find_comment(*ids, "ada").manual_comment == "Both claims, apart."
        assert gradebook.find_grade(*ids, "bo").manual_score is None
        assert gradebook.find_grade("test_lookup", *ids[1:], "ada").auto_score == 4.0
    report = (merged["out"] / "report.md").read_text(encoding="utf-8")
    assert f"1 of the 2 learners with {TITLE} waits for the answers graded by hand" in report


def test_the_class_report_counts_the_notebook_of_those_who_have_it(merged) -> None:
    text = (merged["out"] / "report.md").read_text(encoding="utf-8")
    assert f"| {TITLE} | 10.00 / 20.00 | 1 / 2 |" in text
    assert f"| {TITLE}, graded by hand | 4.00 / 5.00 | 0 / 1 |" in text  # once it is graded
    assert ABSENT.format(title=f"{TITLE}, graded by hand", have=1, graded=3) in text
    assert "| Softmax | 10.00 / 10.00 | 3 / 3 |" in text
    assert NOT_SUBMITTED.format(title=TITLE, have=2, graded=3) in text
    assert f"| {TITLE}: test_lookup | 1 / 2 |" in text
    failures = text.split("## Most common failure messages")[1].split("##")[0]
    assert NOT_DONE in failures and "| 1 |" in failures
    html = (merged["out"] / "report.html").read_text(encoding="utf-8")
    assert f'<td>{TITLE}</td><td class="n">10.00 / 20.00</td><td class="n">1 / 2</td>' in html


def test_each_learner_folder_keeps_the_notebook_tests_and_feedback(merged) -> None:
    ada = json.loads((merged["out"] / "ada" / "results.json").read_text(encoding="utf-8"))
    notebook = [t for t in ada["tests"] if t["tags"] == ["notebook"]]
    assert len(notebook) == 6 and all(t["status"] == "passed" for t in notebook)
    assert (merged["out"] / "ada" / "notebook.graded.ipynb").is_file()
    assert not (merged["out"] / "cy" / "notebook.graded.ipynb").exists()


def test_the_table_shows_the_notebook_row(merged) -> None:
    done = run_cli(
        "merge",
        str(merged["shard1"]),
        "--out",
        str(merged["out"].parent / "again"),
        "--course",
        str(ROOT / "course.toml"),
        cwd=merged["out"].parent,
    )
    assert done.returncode == 3, done.stderr  # shard 2/2 is missing, and said
    assert "missing: 2" in done.stderr
    row, by_hand = [line for line in done.stdout.splitlines() if TITLE in line]
    assert "20.00 / 20.00" in row and "1 / 1" in row
    # graded in shard 1's formgrader, so in this merge too (carried with ada's folder)
    assert "graded by hand" in by_hand and "4.00 / 5.00" in by_hand and "0 / 1" in by_hand
