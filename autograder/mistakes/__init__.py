"""Known mistakes: the catalogue and the mutants that prove the graders catch them.

Known mistakes: the catalogue learners read, and (instructor side) the mutants that prove the
graders catch each one."""

from autograder.mistakes.catalogue import (
    Catalogue,
    CatalogueError,
    Mistake,
    course_catalogue,
    load_catalogue,
)

__all__ = ["Catalogue", "CatalogueError", "Mistake", "course_catalogue", "load_catalogue"]
