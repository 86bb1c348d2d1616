"""The class's own nbgrader folder, for grading written answers in formgrader.

`grade-class` grades each notebook in a sandbox whose nbgrader gradebook dies with it; the
instructor grades the written answers in one kept folder, DIR/nbgrader, and the scores graded by
hand are read back into gradebook.csv (trusted side).

- sync (every gradebook rebuild: grade-class, merge) brings in each learner with the notebook:
  their graded notebook, without HTML or script outputs, and their autograded scores. It returns
  the hand-graded points of each learner whose every hand-graded cell has a score.
- A score graded by hand is kept while the learner's answer stays the same; a changed answer is
  pending again. carry (merge) copies the shards' hand grades of the same answers into DIR's,
  where it has none.
- Nothing here runs learner code; nbgrader is imported only when the course has a notebook and
  some learner has it.

Layout and design: docs/internals/notebook-mistakes.md#the-class-nbgrader-folder.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from autograder.notebook.autograde import FEEDBACK_NAME
from autograder.notebook.cell_errors import grade_id_of
from autograder.notebook.course import CONFIG_FILE, NotebookAssignment, cell_text
from autograder.reports import results_json

FOLDER = "nbgrader"
CONFIG_ADDED = """
# Added by `autograder grade-class`: this is the class's own nbgrader folder (the learners'
# notebooks as graded, the written answers graded by hand in formgrader). Formgrader shows the
# learners' notebooks with their HTML sanitised; grade-class autogrades, in its sandbox, so
# never press formgrader's "autograde" here.
c.HTMLExporter.sanitize_html = True
"""
#: Output types formgrader may show (what learner code printed or drew); the rest is dropped.
SAFE_OUTPUT_DATA = ("text/plain", "image/png", "image/jpeg")
GENERATE_FAILED = (
    "nbgrader could not prepare the class's folder {folder} for grading the written answers by "
    "hand ({detail}); their column in gradebook.csv stays empty."
)


class ClassGradebookError(RuntimeError):
    """The class's nbgrader folder could not be prepared; the message says why."""


def folder(out: Path) -> Path:
    return Path(out) / FOLDER


def sync(
    assignment: NotebookAssignment, out: Path, learners: Iterable[str]
) -> dict[str, float | None]:
    """Bring `learners` (those whose grade has the notebook) into DIR/nbgrader; {learner: their
    hand-graded points, or None while a cell of theirs is pending}. ClassGradebookError when
    nbgrader cannot prepare the folder."""
    learners = [lr for lr in learners if (Path(out) / lr / FEEDBACK_NAME).is_file()]
    if not learners or importlib.util.find_spec("nbgrader") is None:
        return {}
    manual = [c.grade_id for c in assignment.grade_cells() if c.manual]
    found: dict[str, float | None] = {}
    with _quiet_nbgrader():
        root = _prepare(assignment, folder(out))
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
            for learner in learners:
                _bring_in(gradebook, assignment, root, Path(out), learner, manual)
                found[learner] = _hand_score(gradebook, assignment, learner, manual)
    return found


@contextmanager
def _quiet_nbgrader() -> Iterator[None]:
    """nbgrader's own warnings (SQLAlchemy's, on every new submission) stay out of the
    command's stderr, where the instructor reads what matters."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def carry(assignment: NotebookAssignment, out: Path, shards: Mapping[str, Path]) -> None:
    """Copy into DIR's gradebook the hand-graded scores and comments of each learner from the
    gradebook of their shard (``shards``: learner -> shard folder), where DIR has none yet and
    the shard graded the same answer. Learners are brought in first (sync)."""
    by_shard: dict[Path, list[str]] = {}
    for learner, shard in shards.items():
        if (folder(shard) / "gradebook.db").is_file():
            by_shard.setdefault(Path(shard), []).append(learner)
    if not by_shard:
        return
    sync(assignment, out, sorted(shards))
    if importlib.util.find_spec("nbgrader") is None:
        return
    from nbgrader.api import Gradebook

    manual = [c.grade_id for c in assignment.grade_cells() if c.manual]
    with _quiet_nbgrader(), Gradebook(f"sqlite:///{folder(out) / 'gradebook.db'}") as target:
        for shard, learners in sorted(by_shard.items()):
            with Gradebook(f"sqlite:///{folder(shard) / 'gradebook.db'}") as source:
                for learner in learners:
                    theirs = _answers(folder(shard), assignment, learner, manual)
                    if theirs == _answers(folder(out), assignment, learner, manual):
                        _copy_hand_grades(source, target, assignment, learner, manual)


def _prepare(assignment: NotebookAssignment, root: Path) -> Path:
    """DIR/nbgrader with the course's config and source, and the assignment generated in its
    gradebook (again when the course's source notebook changed)."""
    source = root / "source" / assignment.assignment
    changed = not (source / assignment.source_notebook.name).is_file() or (
        (source / assignment.source_notebook.name).read_bytes()
        != assignment.source_notebook.read_bytes()
    )
    if not changed and (root / "gradebook.db").is_file():
        return root
    root.mkdir(parents=True, exist_ok=True)
    config = (assignment.course_dir / CONFIG_FILE).read_text(encoding="utf-8")
    (root / CONFIG_FILE).write_text(config.rstrip("\n") + "\n" + CONFIG_ADDED, encoding="utf-8")
    shutil.rmtree(source, ignore_errors=True)
    shutil.copytree(
        assignment.source_folder,
        source,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
    )
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    settings = PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config()
    settings.CourseDirectory.root = str(root)
    generated = NbGraderAPI(config=settings).generate_assignment(
        assignment.assignment, force=True, create=True
    )
    if not generated["success"]:
        detail = (generated.get("error") or generated.get("log") or "").strip().splitlines()
        raise ClassGradebookError(
            GENERATE_FAILED.format(folder=root, detail=detail[-1] if detail else "no log")
        )
    return root


def _bring_in(
    gradebook: Any,
    assignment: NotebookAssignment,
    root: Path,
    out: Path,
    learner: str,
    manual: list[str],
) -> None:
    """The learner's graded notebook into autograded/, their submission and autograded scores
    into the gradebook; their hand-graded cells pending again when their answer changed."""
    from nbgrader.api import MissingEntry

    try:
        graded = json.loads((out / learner / FEEDBACK_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    shown = json.dumps(_without_active_outputs(graded), indent=1, ensure_ascii=False) + "\n"
    target = _autograded(root, assignment, learner)
    before = target.read_text(encoding="utf-8") if target.is_file() else None
    gradebook.update_or_create_student(learner)
    try:
        gradebook.find_submission(assignment.assignment, learner)
    except MissingEntry:
        gradebook.add_submission(assignment.assignment, learner)
    else:
        if before == shown:
            return  # as it was: nothing to bring in
    answered = before is None or _manual_sources(json.loads(before), manual) != _manual_sources(
        graded, manual
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(shown, encoding="utf-8")
    scores = _autograded_scores(out / learner / results_json.FILE_NAME, assignment)
    ids = (assignment.assignment, assignment.assignment, learner)
    for cell in assignment.grade_cells():
        grade = gradebook.find_grade(cell.grade_id, *ids)
        if cell.manual:
            grade.auto_score = None
            if answered:
                grade.manual_score = None
            grade.needs_manual_grade = grade.manual_score is None
        else:
            grade.auto_score = scores.get(cell.grade_id, 0.0)
            grade.needs_manual_grade = False
    gradebook.db.commit()


def _hand_score(
    gradebook: Any, assignment: NotebookAssignment, learner: str, manual: list[str]
) -> float | None:
    """The learner's hand-graded points, None while one of those cells has no score."""
    total = 0.0
    for name in manual:
        grade = gradebook.find_grade(name, assignment.assignment, assignment.assignment, learner)
        if grade.manual_score is None:
            return None
        total += float(grade.manual_score) + float(grade.extra_credit or 0.0)
    return total


def _copy_hand_grades(
    source: Any, target: Any, assignment: NotebookAssignment, learner: str, manual: list[str]
) -> None:
    from nbgrader.api import MissingEntry

    ids = (assignment.assignment, assignment.assignment, learner)
    for name in manual:
        try:
            theirs, ours = source.find_grade(name, *ids), target.find_grade(name, *ids)
        except MissingEntry:
            continue
        if theirs.manual_score is None or ours.manual_score is not None:
            continue
        ours.manual_score, ours.extra_credit = theirs.manual_score, theirs.extra_credit
        ours.needs_manual_grade = False
        try:
            said = source.find_comment(name, *ids).manual_comment
            if said:
                target.find_comment(name, *ids).manual_comment = said
        except MissingEntry:
            pass
    target.db.commit()


def _autograded(root: Path, assignment: NotebookAssignment, learner: str) -> Path:
    name = f"{assignment.assignment}.ipynb"
    return root / "autograded" / learner / assignment.assignment / name


def _answers(
    root: Path, assignment: NotebookAssignment, learner: str, manual: list[str]
) -> dict[str, str] | None:
    path = _autograded(root, assignment, learner)
    try:
        return _manual_sources(json.loads(path.read_text(encoding="utf-8")), manual)
    except (OSError, ValueError):
        return None


def _manual_sources(document: dict, manual: list[str]) -> dict[str, str]:
    """The source of each hand-graded cell (the learner's answer), by grade_id."""
    cells = document.get("cells") if isinstance(document.get("cells"), list) else []
    return {
        grade_id_of(c): cell_text(c).strip()
        for c in cells
        if isinstance(c, dict) and grade_id_of(c) in manual
    }


def _autograded_scores(results: Path, assignment: NotebookAssignment) -> dict[str, float]:
    """{grade_id: points scored} of the notebook's tests in the learner's results.json."""
    try:
        document = results_json.read_results_json(results)
    except results_json.ResultsFileError:
        return {}
    prefix = f"{assignment.title}: "
    scores = {}
    for test in document.get("tests", []):
        if test.get("tags") == [assignment.component]:
            name = str(test.get("name", ""))
            if name.startswith(prefix) and isinstance(test.get("score"), int | float):
                scores[name.removeprefix(prefix)] = float(test["score"])
    return scores


def _without_active_outputs(document: dict) -> dict:
    """The notebook with only plain text and raster images left in its outputs' data: no HTML,
    SVG, JavaScript or widget a learner's code produced reaches the instructor's browser."""
    for cell in document.get("cells", []) if isinstance(document.get("cells"), list) else []:
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs if isinstance(outputs, list) else []:
            data = output.get("data") if isinstance(output, dict) else None
            if isinstance(data, dict):
                output["data"] = {k: v for k, v in data.items() if k in SAFE_OUTPUT_DATA}
    return document
