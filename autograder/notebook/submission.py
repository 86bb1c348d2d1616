"""The notebook part of a submission's grade, for the one grade builder (results/build.py).

When the course has an nbgrader notebook assignment (course.py) and the submission's repository
holds the learner notebook (assignments/notebooks/<id>.ipynb), the notebook is graded in its own
sandbox and becomes the component `notebook`, after the module components; its cells graded
by hand (a written answer) are shown pending, apart from the total (part_notes.py). The time it
took counts in the grade's duration. A submission without the notebook has no notebook part: its
grade has no notebook component.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from autograder.config import SUBMISSION_MISSING, SUBMISSION_NOT_FOLDER, CourseConfig
from autograder.learner_files import LinkRefused, TooLarge, read_file
from autograder.notebook.autograde import (
    FEEDBACK_NAME,
    TOO_LARGE,
    failed_everywhere,
    grade_notebook,
)
from autograder.notebook.course import COMPONENT, find_notebook_assignments
from autograder.notebook.nbgrader_run import MAX_NOTEBOOK_BYTES
from autograder.notebook.part_notes import data_check, part_notes
from autograder.results import NotebookPart

NOTEBOOK = COMPONENT


def notebook_parts(
    config: CourseConfig,
    submission: Path,
    out_dir: Path,
    *,
    cell_timeout: float | None = None,
    hide: Sequence[Path] = (),
) -> list[NotebookPart]:
    """The graded notebook assignments the submission holds (none when it has no notebook). The
    autograded notebook (with outputs) is written to out_dir for the learner. ``cell_timeout``:
    seconds per cell (default: course.toml's [notebook] cell_timeout). ``hide``: folders the run
    must not see besides the learner's repository (H43: in a batch, DIR with its compiled hidden
    graders and the other learners' reports, and the other learners' copies)."""
    root = config.submission_root(Path(submission))
    (Path(out_dir) / FEEDBACK_NAME).unlink(missing_ok=True)  # never last run's copy
    parts = []
    for assignment in find_notebook_assignments(config.root):
        errors: list[str] = []
        path = assignment.learner_path
        started = time.monotonic()
        try:  # through no link (learner_files): the bytes graded are the submission's own
            data = read_file(root, path, max_bytes=MAX_NOTEBOOK_BYTES)
        except LinkRefused as error:
            graded = failed_everywhere(assignment, error.sentence, "import_error")
        except TooLarge:
            too_large = TOO_LARGE.format(path=path, limit=MAX_NOTEBOOK_BYTES // 2**20)
            graded = failed_everywhere(assignment, too_large, "too_large")
        except OSError:  # no notebook (or a folder, a pipe): no notebook component
            continue
        else:
            with tempfile.TemporaryDirectory(prefix="autograder-notebook-") as private:
                notebook = Path(private) / path.name
                notebook.write_bytes(data)
                graded = grade_notebook(
                    assignment,
                    notebook,
                    cell_timeout=cell_timeout or config.notebook.cell_timeout,
                    memory_mb=config.notebook.memory_mb,
                    keep=out_dir,
                    grader_errors=errors,
                    hide=(root, *hide),
                )
        notes, extra = part_notes(assignment, graded, data_check(config))
        part = NotebookPart(
            assignment.component,
            assignment.title,
            assignment.points,
            tuple(graded.tests),
            tuple(errors),
            notes=tuple(notes),
            review=tuple(graded.review),
            extra=extra,
            duration=time.monotonic() - started,
        )
        parts.append(part)
    return parts


def notebook_reports(folder: Path) -> list[str]:
    """The notebook's files among a submission's reports in folder (the graded notebook, when
    this run wrote one)."""
    return [FEEDBACK_NAME] if (Path(folder) / FEEDBACK_NAME).is_file() else []


NO_NOTEBOOK = (
    "The submission {path} holds no notebook to grade; expected {expected} (the course's "
    "notebook, where the learner keeps it)."
)


def notebook_refusal(config: CourseConfig, submission: Path) -> str:
    """Why `--component notebook` cannot grade this submission ("" when it can): the
    submission is no folder, or holds none of the course's notebooks."""
    if not Path(submission).exists():
        return SUBMISSION_MISSING.format(path=submission)
    if not Path(submission).is_dir():
        return SUBMISSION_NOT_FOLDER.format(path=submission)
    root = config.submission_root(Path(submission))
    wanted = [a.learner_path for a in find_notebook_assignments(config.root)]
    if any((root / path).is_file() for path in wanted):
        return ""
    expected = " or ".join(str(path) for path in wanted) or "a notebook"
    return NO_NOTEBOOK.format(path=submission, expected=expected)
