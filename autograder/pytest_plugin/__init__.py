"""The autograder's pytest plugin (entry point `pytest11: autograder`).

Active when a course.toml is found (``--course FILE``, else searched upward); inert otherwise. It
only touches *grader tests* (under the course's ``visible_tests`` or ``hidden_tests``), and uses
pytest through its public API only: hooks, fixtures, markers and stashes. Its modules:
configure.py (options, markers, grader.log's header), collection.py (components, weights,
order, seeds), fixtures.py (``course``, ``learner``, ``rng``), outcomes.py (the learner's
sentence, results, points) and state.py (what a run keeps, in pytest's stashes).

PYTEST_DONT_REWRITE: a grade imports this package before pytest starts, so pytest could not
assertion-rewrite it anyway; it has no assertions to rewrite.

Design (each module's options and markers): docs/internals/runtime.md#the-pytest-plugin.
"""

from __future__ import annotations

from autograder.pytest_plugin.collection import (
    BAD_WEIGHT,
    MANY_MARKERS,
    NO_MARKER,
    pytest_collection_modifyitems,
    seed_for,
)
from autograder.pytest_plugin.configure import (
    pytest_addoption,
    pytest_configure,
    pytest_report_header,
    pytest_sessionstart,
    set_console_width,
)
from autograder.pytest_plugin.fixtures import (
    NO_COURSE,
    NO_ITEM,
    RELEASE_AFTER_BYTES,
    _autograder_test,
    course,
    earlier_results,
    learner,
    pytest_runtest_protocol,
    rng,
    torn_down,
)
from autograder.pytest_plugin.outcomes import (
    GRADER_ERROR,
    GRADER_ERROR_HIDDEN_DETAIL,
    LEARNER_OUTPUT,
    PLAIN_ASSERT_HIDDEN,
    pytest_runtest_call,
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_runtest_teardown,
    pytest_terminal_summary,
    run_grade,
)
from autograder.pytest_plugin.state import (
    HEADER,
    INFO,
    LOG_WIDTH,
    OUTCOME,
    STATE,
    GraderInfo,
    RunState,
    active_course,
    run_state,
    start_run,
)

__all__ = [
    "BAD_WEIGHT",
    "GRADER_ERROR",
    "GRADER_ERROR_HIDDEN_DETAIL",
    "HEADER",
    "INFO",
    "LEARNER_OUTPUT",
    "LOG_WIDTH",
    "MANY_MARKERS",
    "NO_COURSE",
    "NO_ITEM",
    "NO_MARKER",
    "OUTCOME",
    "PLAIN_ASSERT_HIDDEN",
    "RELEASE_AFTER_BYTES",
    "STATE",
    "GraderInfo",
    "RunState",
    "_autograder_test",
    "active_course",
    "course",
    "earlier_results",
    "learner",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_report_header",
    "pytest_runtest_call",
    "pytest_runtest_makereport",
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_teardown",
    "pytest_sessionstart",
    "pytest_terminal_summary",
    "rng",
    "run_grade",
    "run_state",
    "seed_for",
    "set_console_width",
    "start_run",
    "torn_down",
]
