"""The course's catalogue of known mistakes (course.toml `[course] mistakes`), for the graders.

`mistake("attention/no-scale")` is the learner-facing sentence that names a mistake, its fix and
the course-note section to read; pass it as a key of `expect_close(..., mistakes=...)` or as a
hint, so that `autograder check` finds the id in the feedback the mistake's mutant gets.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from autograder.config import find_course_file, load_course
from autograder.mistakes import Catalogue, course_catalogue


@cache
def catalogue() -> Catalogue:
    """The catalogue of the course these graders belong to (the course.toml above them)."""
    return course_catalogue(load_course(find_course_file(Path(__file__))))


def mistake(mistake_id: str) -> str:
    """The sentence naming the catalogued mistake `mistake_id` (`<component>/<slug>`)."""
    return catalogue().sentence(mistake_id)
