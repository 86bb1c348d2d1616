"""nbgrader configuration of the Transformers 101 notebook assignments.

Run nbgrader from this folder (docs/instructor/notebook.md): `nbgrader generate_assignment
contextual_vectors`, then `nbgrader autograde contextual_vectors`. `autograder grade` runs the
same commands with this file, on a temporary copy of this folder, inside its sandbox; a learner's
release holds a copy of it (their own grading), and `grade-class` one in DIR/nbgrader
(formgrader, for the written answers).
"""

import os
import sys

c = get_config()  # noqa: F821 (defined by traitlets when it runs this file)

HERE = os.path.dirname(os.path.abspath(__file__))
# The grading rules below live in the autograder package of this repository.
if os.path.dirname(HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(HERE))

c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = "t101"
c.CourseDirectory.db_assignments = [dict(name="contextual_vectors")]

# What learners see where a solution was removed.
c.ClearSolutions.code_stub = {
    "python": "# YOUR CODE HERE\n"
    'raise NotImplementedError("Replace this line with your code; this step is not done yet.")'
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Grading: seconds per cell (an infinite loop is interrupted and that cell fails), outputs kept
# short, and the rules of autograder/notebook/preprocessors.py inserted where they must run.
c.Execute.timeout = 60
c.Execute.startup_timeout = 60
# A loaded machine can be slow to send a cell's output; that must not abort the whole run.
c.Execute.raise_on_iopub_timeout = False
c.LimitOutput.max_lines = 200
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "autograder.notebook.preprocessors.DropDuplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "autograder.notebook.preprocessors.RestoreCellOrder",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "autograder.notebook.preprocessors.ExecuteUntilKernelDies",
    "autograder.notebook.preprocessors.StderrIsNotFailure",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
