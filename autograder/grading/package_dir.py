"""Where the graders and a submission's package are: the folders pytest runs, the folder graded."""

from __future__ import annotations

from pathlib import Path

from autograder.config import CourseConfig, SubmissionError, SubmissionLink
from autograder.learner_files import find_folders
from autograder.results import Ungraded

NO_VISIBLE_TESTS = (
    "The visible tests folder {path} does not exist; check visible_tests in {course}."
)


def grader_package(config: CourseConfig, submission: Path, name: str) -> Path | Ungraded:
    """The submission's package folder (course.toml's place, else the one folder of that name
    within a few levels), or an Ungraded saying why there is none."""
    try:
        return config.package_dir_for(submission)
    except SubmissionLink as error:  # never another folder instead of the one that is a link
        return Ungraded(name, str(error))
    except SubmissionError as error:
        package_dir = find_package(submission, config.package)
        return Ungraded(name, str(error)) if package_dir is None else package_dir


def grader_folders(config: CourseConfig, visible_only: bool) -> list[Path] | Ungraded:
    """The visible tests folder, then the hidden one (unless visible_only or absent)."""
    if not config.visible_tests.is_dir():
        reason = NO_VISIBLE_TESTS.format(path=config.visible_tests, course=config.path)
        return Ungraded("", reason)
    folders = [config.visible_tests]
    hidden = config.hidden_tests
    if not visible_only and hidden is not None and hidden.is_dir():
        folders.append(hidden)
    return folders


def find_package(submission: Path, package: str, depth: int = 3) -> Path | None:
    """The one folder named `package` with an __init__.py within `depth` levels of a submission
    laid out differently (e.g. t101/ at the repository root); None if there is none or several.
    No link is followed on the way (learner_files.find_folders)."""
    if not submission.is_dir():
        return None
    found = find_folders(submission.resolve(), package, depth)
    return found[0] if len(found) == 1 else None
