"""Notebook assignments graded through nbgrader: the `notebook` component.

A course keeps an nbgrader course folder beside course.toml (course.py says where); a learner
keeps the notebook at assignments/notebooks/<id>.ipynb. `autograder grade` runs nbgrader's own
generate_assignment and autograde on a private copy, sandboxed like module code (nbgrader_run.py,
runner.py), with grading rules added to nbgrader's pipeline (preprocessors.py), and reports
each autograded cell as a test (autograde.py; results/build.py scores them). `autograder
release` calls generate_learner_notebook (learner_copy.py).

Only preprocessors.py and runner.py import nbgrader; importing this package does not.
"""

from autograder.notebook.autograde import grade_notebook, grade_notebooks, notebook_tools_installed
from autograder.notebook.course import (
    COMPONENT,
    NotebookAssignment,
    NotebookCourseError,
    find_notebook_assignments,
    notebook_components,
    only_assignment,
)
from autograder.notebook.learner_copy import NotebookReleaseError, generate_learner_notebook

__all__ = [
    "COMPONENT",
    "NotebookAssignment",
    "NotebookCourseError",
    "NotebookReleaseError",
    "find_notebook_assignments",
    "generate_learner_notebook",
    "grade_notebook",
    "grade_notebooks",
    "notebook_components",
    "notebook_tools_installed",
    "only_assignment",
]
