"""A pytest plugin for tests/reference/test_standin_order.py: which grader test hands which
stand-ins. Loaded with ``-p tests.reference.standin_hand_log``; writes JSON lines
{nodeid, component, visibility, kinds} to the file $STANDIN_HAND_LOG."""

from __future__ import annotations

import json
import os

import pytest

from autograder.pytest_plugin import INFO
from autograder.runtime import LearnerSession

_HANDED: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    set_standins, stand_in_function = LearnerSession.set_standins, LearnerSession.stand_in_function

    def logged_set_standins(self, obj, parts, then=()):
        _HANDED.extend(kind for _, kind, _, _ in parts)
        return set_standins(self, obj, parts, then)

    def logged_stand_in_function(self, module, name, *, source, kind):
        _HANDED.append(kind)
        return stand_in_function(self, module, name, source=source, kind=kind)

    LearnerSession.set_standins = logged_set_standins
    LearnerSession.stand_in_function = logged_stand_in_function


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    _HANDED.clear()
    try:
        return (yield)
    finally:
        info = item.stash.get(INFO, None)
        if info is not None:
            row = {
                "nodeid": item.nodeid,
                "component": info.component,
                "visibility": info.visibility,
                "kinds": sorted(set(_HANDED)),
            }
            with open(os.environ["STANDIN_HAND_LOG"], "a", encoding="utf-8") as log:
                log.write(json.dumps(row) + "\n")
