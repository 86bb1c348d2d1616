"""The notebook part of a submission's grade, for the one grade builder (results/build.py).

When the course has an nbgrader notebook assignment (course.py) and the submission's repository
holds the learner notebook (assignments/notebooks/<id>.ipynb), the notebook is graded in its own
sandbox and becomes the component `notebook`, after the module components. A submission without
the notebook has no notebook part: its grade has no notebook component.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from autograder.config import CourseConfig
from autograder.learner_files import LinkRefused, TooLarge, read_file
from autograder.notebook.autograde import (
    DEFAULT_CELL_TIMEOUT,
    FEEDBACK_NAME,
    TOO_LARGE,
    failed_everywhere,
    grade_notebook,
)
from autograder.notebook.course import COMPONENT, find_notebook_assignments
from autograder.notebook.nbgrader_run import MAX_NOTEBOOK_BYTES
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
    autograded notebook (with outputs) is written to out_dir for the learner. ``hide``: folders
    the run must not see besides the learner's repository (H43: in a batch, DIR with its
    compiled hidden graders and the other learners' reports, and the other learners' copies)."""
    root = config.submission_root(Path(submission))
    (Path(out_dir) / FEEDBACK_NAME).unlink(missing_ok=True)  # never last run's copy
    parts = []
    for assignment in find_notebook_assignments(config.root):
        errors: list[str] = []
        path = assignment.learner_path
        try:  # through no link (learner_files): the bytes graded are the submission's own
            data = read_file(root, path, max_bytes=MAX_NOTEBOOK_BYTES)
        except LinkRefused as error:
            tests = failed_everywhere(assignment, error.sentence, "import_error")
        except TooLarge:
            too_large = TOO_LARGE.format(path=path, limit=MAX_NOTEBOOK_BYTES // 2**20)
            tests = failed_everywhere(assignment, too_large, "too_large")
        except OSError:  # no notebook (or a folder, a pipe): no notebook component
            continue
        else:
            with tempfile.TemporaryDirectory(prefix="autograder-notebook-") as private:
                notebook = Path(private) / path.name
                notebook.write_bytes(data)
                tests = grade_notebook(
                    assignment,
                    notebook,
                    cell_timeout=cell_timeout or DEFAULT_CELL_TIMEOUT,
                    memory_mb=config.limits.memory_mb,
                    keep=out_dir,
                    grader_errors=errors,
                    hide=(root, *hide),
                )
        part = NotebookPart(
            assignment.component, assignment.title, assignment.points, tuple(tests), tuple(errors)
        )
        parts.append(part)
    return parts
