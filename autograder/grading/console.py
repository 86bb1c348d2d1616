"""Each submission's own pytest console (its grader.log), in a session that grades several.

``submission_console`` puts a new TerminalReporter, writing to the submission's log, in the
session's place and replays what the session's console was told while it collected
(GradersSession.events); ``close_console`` ends the log as pytest ends a session's console and
puts the session's reporter back. So every grader.log reads as the console of a session that
graded that one submission.

Design: docs/internals/runtime.md#a-console-per-submission.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

import pytest

from autograder.pytest_plugin import set_console_width

REPORTER = "terminalreporter"  # the name pytest registers its console under
SUMMARY = "{passed} passed, {failed} failed in {seconds:.2f}s"  # without a pytest console


@contextmanager
def submission_console(
    session: pytest.Session, log: TextIO, events: Sequence[Any]
) -> Iterator[Any]:
    """A TerminalReporter on ``log`` for one submission's run (None when the session has no
    console, `-p no:terminal`)."""
    manager = session.config.pluginmanager
    before = manager.get_plugin(REPORTER)
    if before is None:
        yield None
        return
    manager.unregister(before)
    reporter = pytest.TerminalReporter(session.config, log)
    try:
        manager.register(reporter, REPORTER)
        # Registering replays every warning recorded so far (pluggy's history): the session's
        # own are told again below, in their order; earlier submissions' are not this one's.
        reporter.stats.clear()
        set_console_width(session.config)
        reporter.pytest_sessionstart(session)
        reporter.pytest_collection()
        for event in events:
            event(reporter)
        reporter.pytest_collection_finish(session)
        yield reporter
    finally:
        if manager.is_registered(reporter):
            manager.unregister(reporter)
        manager.register(before, REPORTER)


def close_console(session: pytest.Session, reporter: Any, log: TextIO, counts: Any) -> None:
    """The end of a submission's console: pytest's summary (failures, short summary, the
    plugin's points) and its statistics line, as pytest ends a session. ``counts``:
    (passed, failed, seconds) for the line written without a pytest console."""
    if reporter is None:
        passed, failed, seconds = counts
        log.write(f"\n{SUMMARY.format(passed=passed, failed=failed, seconds=seconds)}\n")
        return
    status = pytest.ExitCode.TESTS_FAILED if session.testsfailed else pytest.ExitCode.OK
    reporter.write("\n")  # ends the last test's line (write_line would add one)
    session.config.hook.pytest_terminal_summary(
        terminalreporter=reporter, exitstatus=status, config=session.config
    )
    reporter.summary_stats()
