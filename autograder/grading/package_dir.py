"""Where the graders and a submission's package are: the folders pytest runs, the folder graded."""

from __future__ import annotations

from pathlib import Path

from autograder.config import CourseConfig, SubmissionError, SubmissionLink
from autograder.learner_files import find_folders
from autograder.results import Ungraded

NO_VISIBLE_TESTS = (
    "The visible tests folder {path} does not exist; check visible_tests in {course}."
)
NO_HIDDEN_TESTS = (
    "The hidden tests folder {path} does not exist, so the hidden graders cannot run; check "
    "hidden_tests in {course} (without that key the course grades its visible tests only)."
)
NO_REFERENCE_DIR = (
    "The reference folder {path} does not exist, so the hidden graders cannot compare with "
    "the reference implementations; check reference_dir in {course}."
)
NO_REFERENCE_INIT = (
    "The reference folder {path} has no __init__.py, so the hidden graders cannot import the "
    "reference package; check reference_dir in {course}."
)
NO_REFERENCE_MODULE = (
    "The reference module {path} of component {name} does not exist, so its hidden graders "
    "cannot run; check reference_dir in {course} and module in that component's table."
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
    """The visible tests folder, then the hidden one (unless visible_only or not configured);
    an Ungraded with course_files_refusal's sentence when a configured folder is missing."""
    refusal = course_files_refusal(config, visible_only)
    if refusal is not None:
        return Ungraded("", refusal)
    folders = [config.visible_tests]
    hidden = config.hidden_tests
    if not visible_only and hidden is not None:
        folders.append(hidden)
    return folders


def course_files_refusal(config: CourseConfig, visible_only: bool) -> str | None:
    """The sentence saying which grader file course.toml configures but is missing (the visible
    tests; unless visible_only, the hidden tests, the reference package and each component's
    reference module); None when all are there. A learner release's course.toml has no
    hidden_tests or reference_dir key, so nothing of theirs is asked for there."""
    course = config.path
    if not config.visible_tests.is_dir():
        return NO_VISIBLE_TESTS.format(path=config.visible_tests, course=course)
    if visible_only:
        return None
    hidden = config.hidden_tests
    if hidden is not None and not hidden.is_dir():
        return NO_HIDDEN_TESTS.format(path=hidden, course=course)
    reference = config.course.reference_dir
    if reference is None:
        return None
    if not reference.is_dir():
        return NO_REFERENCE_DIR.format(path=reference, course=course)
    if not (reference / "__init__.py").is_file():
        return NO_REFERENCE_INIT.format(path=reference, course=course)
    for component in config.components:
        module = reference / component.module_file
        if not (module.is_file() or (module.with_suffix("") / "__init__.py").is_file()):
            return NO_REFERENCE_MODULE.format(path=module, name=component.name, course=course)
    return None


def find_package(submission: Path, package: str, depth: int = 3) -> Path | None:
    """The one folder named `package` with an __init__.py within `depth` levels of a submission
    laid out differently (e.g. t101/ at the repository root); None if there is none or several.
    No link is followed on the way (learner_files.find_folders)."""
    if not submission.is_dir():
        return None
    found = find_folders(submission.resolve(), package, depth)
    return found[0] if len(found) == 1 else None
