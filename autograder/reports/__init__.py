"""Report writers: results.json (Gradescope), summary.md, junit.xml and the terminal table.

Each writer takes a GradeResult; learner text goes through autograder/learner_text.py first.
This package's import stays light; import the writer modules you use.
"""
