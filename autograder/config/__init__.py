"""course.toml as a typed, validated CourseConfig.

The course file is the only place that ties the course-agnostic framework to one course. Every
problem with it is reported as a full sentence naming the file, the key path, what was expected
and what came, so an instructor can fix it without reading this module.

Paths (`reference_dir`, `visible_tests`, `hidden_tests`) are resolved relative to the course
file. `package_dir` stays relative: it names where the package lives inside *any* learner
repository, the course's own root being just one of them.
"""

from autograder.config.course_config import (
    COURSE_FILE,
    NO_PACKAGE,
    SUBMISSION_MISSING,
    SUBMISSION_NOT_FOLDER,
    CourseConfig,
    CourseConfigError,
    SubmissionError,
    SubmissionLink,
)
from autograder.config.limit_rules import (
    BAD_TIMEOUT,
    DEFAULT_VALUE_MB,
    MAX_MB,
    MAX_SECONDS,
    LimitsSection,
    OptionError,
    check_timeout,
)
from autograder.config.loading import (
    COURSE_FILE_MISSING,
    NO_COURSE_FILE,
    NOT_A_TABLE,
    TOML_SYNTAX,
    find_course_file,
    load_course,
    load_course_option,
)
from autograder.config.notebook_section import NotebookSection
from autograder.config.sections import (
    DEFAULT_FORBIDDEN_MESSAGE,
    MAX_POINTS,
    RESERVED_MARKERS,
    CiSection,
    Component,
    CourseSection,
    ForbiddenSection,
)

__all__ = [
    "BAD_TIMEOUT",
    "COURSE_FILE",
    "COURSE_FILE_MISSING",
    "DEFAULT_FORBIDDEN_MESSAGE",
    "DEFAULT_VALUE_MB",
    "MAX_MB",
    "MAX_POINTS",
    "MAX_SECONDS",
    "NOT_A_TABLE",
    "NO_COURSE_FILE",
    "NO_PACKAGE",
    "RESERVED_MARKERS",
    "SUBMISSION_MISSING",
    "SUBMISSION_NOT_FOLDER",
    "TOML_SYNTAX",
    "CiSection",
    "Component",
    "CourseConfig",
    "CourseConfigError",
    "CourseSection",
    "ForbiddenSection",
    "LimitsSection",
    "NotebookSection",
    "OptionError",
    "SubmissionError",
    "SubmissionLink",
    "check_timeout",
    "find_course_file",
    "load_course",
    "load_course_option",
]
