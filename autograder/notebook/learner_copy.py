"""The learner's copy of a notebook assignment, for `autograder release`.

generate_learner_notebook: the notebook nbgrader generates from the instructor's source (no
solutions, no hidden tests), with the data files released beside it. learner_course_files: the
learner's own nbgrader course folder, so that `autograder grade .` in the learner's repository
(and their CI without the instructor's tests) grades the notebook as the instructor's grader
does, on its visible tests: the course's nbgrader_config.py, and as the source notebook the
learner's notebook itself (nbgrader generates the same notebook from it), with every data file
of the source folder, the grader-only ones included (the grader's fallback data).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from autograder.notebook.autograde import DEFAULT_CELL_TIMEOUT, notebook_tools_installed
from autograder.notebook.course import (
    CONFIG_FILE,
    COURSE_DIR,
    NotebookAssignment,
    only_assignment,
)
from autograder.notebook.nbgrader_run import run_nbgrader

NOT_INSTALLED = (
    "The learner notebook cannot be generated without nbgrader; install the notebook extra "
    "(pip install -e '.[notebook]') and run the release again."
)
GENERATION_FAILED = (
    "nbgrader generate_assignment failed for {assignment}, so no learner notebook was written; "
    "its log ends with:\n{log}"
)


class NotebookReleaseError(RuntimeError):
    """The learner notebook could not be generated; the message says why."""


def generate_learner_notebook(
    dest: Path,
    *,
    course_root: Path | None = None,
    assignment: NotebookAssignment | None = None,
    grader_only: Sequence[str] = (),
) -> list[Path]:
    """Write the nbgrader-generated learner notebook at `dest` (e.g.
    `<release>/assignments/notebooks/contextual_vectors.ipynb`) and the data files released
    with it beside it, but those named in `grader_only` (course.toml [notebook] grader_only:
    the grader's fallback data). Returns the paths written, notebook first.

    The assignment is `assignment`, or the only one of the course at `course_root` (default:
    the repository holding this package). NotebookReleaseError when nbgrader is missing or fails.
    """
    if not notebook_tools_installed():
        raise NotebookReleaseError(NOT_INSTALLED)
    if assignment is None:
        assignment = only_assignment(course_root or Path(__file__).resolve().parents[2])
    dest = Path(dest)
    staging = dest.parent / f".{dest.name}.release"
    report = run_nbgrader(
        assignment,
        notebooks={},
        mode="release",
        cell_timeout=DEFAULT_CELL_TIMEOUT,
        memory_mb=4096,
        keep=staging,
    )
    if not report.ok:
        raise NotebookReleaseError(
            GENERATION_FAILED.format(assignment=assignment.assignment, log=report.log[-2000:])
        )
    written = []
    try:
        for item in sorted(staging.iterdir(), key=lambda p: p.suffix != ".ipynb"):
            if item.name in grader_only:
                continue
            target = dest if item.suffix == ".ipynb" else dest.parent / item.name
            item.replace(target)
            written.append(target)
    finally:
        for leftover in staging.glob("*"):
            leftover.unlink()
        staging.rmdir()
    return written


def learner_course_files(
    assignment: NotebookAssignment, learner_notebook: bytes
) -> dict[PurePosixPath, bytes]:
    """{path in the learner's repository: bytes} of the learner's nbgrader course folder for
    `assignment`, whose source notebook is `learner_notebook` (generate_learner_notebook's)."""
    course = PurePosixPath(COURSE_DIR)
    source = course / "source" / assignment.assignment
    files = {course / CONFIG_FILE: (assignment.course_dir / CONFIG_FILE).read_bytes()}
    ignore = assignment.course_dir / ".gitignore"
    if ignore.is_file():
        files[course / ".gitignore"] = ignore.read_bytes()
    files[source / assignment.source_notebook.name] = learner_notebook
    for item in sorted(assignment.source_folder.iterdir()):
        if item.is_file() and item != assignment.source_notebook and not item.name.startswith("."):
            files[source / item.name] = item.read_bytes()
    return files
