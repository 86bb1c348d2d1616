"""Report writers: results.json (Gradescope), summary.md, junit.xml and the terminal table.

Each writer takes a GradeResult; learner text goes through sanitize.py first. This package's
import stays light (the pytest plugin imports sanitize); import the writer modules you use.
"""
