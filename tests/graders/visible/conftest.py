"""Every grader test here: a known mistake it names points to the learner's line
(tests/graders/support/locations.py)."""

from tests.graders.support.locations import learner_lines  # noqa: F401  (an autouse fixture)
