"""A pytest session put back as collection left it, between two learners of one harness child.

A batch's harness child (batch/session.py) runs the session's collected tests once per
learner. From one run of the tests to the next pytest keeps the session's failure count, the
terminal reporter's statistics and progress (the "[ 42%]" of each line of grader.log, the
summary at its end) and each item's report sections and user properties; expected.py names
an impure function once per run. `Fresh` saves pytest's state once, before the child's first
learner, and puts it back before each learner, with expected.py's warnings; the grading
plugin's own state is reset by `autograder.pytest_plugin.next_submission`, which needs the
learner's submission.

`Fresh.clean` says whether the last run left pytest as it found it (every test and fixture
torn down). After a run that stopped half way (an error in the grading code itself) it does
not, and the child is not given another learner.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from autograder import expected
from autograder.pytest_plugin import torn_down

_SESSION_COUNTS = ("testsfailed", "_shouldstop", "_shouldfail")


class Fresh:
    """The run-to-run state of a collected session, saved to be put back before each run."""

    def __init__(self, session: pytest.Session) -> None:
        self.session = session
        self.counts = {
            name: vars(session)[name] for name in _SESSION_COUNTS if name in vars(session)
        }
        self.reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        self.saved = dict(vars(self.reporter)) if self.reporter is not None else {}

    def restore(self) -> None:
        """The session, its terminal reporter and its items as they were when saved; the
        impure expected-value functions named again in the next grader.log."""
        vars(self.session).update(self.counts)
        if self.reporter is not None:
            state = vars(self.reporter)
            state.clear()
            state.update({name: _copy(value) for name, value in self.saved.items()})
        for item in self.session.items:
            item._report_sections = []
            item.user_properties = []
        expected.next_run()

    def clean(self) -> bool:
        """Whether the last run tore every test and fixture down (no learner's worker left)."""
        return torn_down() and not self.session._setupstate.stack


def _copy(value: Any) -> Any:
    """A value of the saved state as new: containers (two levels: the statistics are a dict of
    lists) and the terminal writer (which remembers the current line) are copied."""
    if isinstance(value, dict):
        return {key: _copy_flat(inner) for key, inner in value.items()}
    if isinstance(value, (list, set)) or type(value).__name__ == "TerminalWriter":
        return copy.copy(value)
    return value


def _copy_flat(value: Any) -> Any:
    return copy.copy(value) if isinstance(value, (dict, list, set)) else value
