"""Starting the worker: a worker that dies before its ready message gets one fresh try; only a
start that fails twice running is remembered for the session (every later call then fails at
once with the same sentence instead of waiting for each start in turn)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from autograder.runtime.harness import worker_channel
from tests.framework.toy_sessions import toy_session

CODE = "def double(x):\n    return 2 * x\n"


@pytest.fixture
def session(tmp_path: Path):
    yield from toy_session(tmp_path / "submission", {"__init__.py": "", "calc.py": CODE})


def killing_first(monkeypatch, times: int) -> list[int]:
    """The real handshake, after killing the first `times` workers just before it (as an
    outside kill right after the fork would)."""
    real = worker_channel.WorkerChannel._handshake
    killed: list[int] = []

    def handshake(self, worker):
        if len(killed) < times:
            killed.append(worker.process.pid)
            os.killpg(worker.process.pid, signal.SIGKILL)
            worker.process.wait()
        return real(self, worker)

    monkeypatch.setattr(worker_channel.WorkerChannel, "_handshake", handshake)
    return killed


def test_a_worker_killed_while_starting_is_replaced_once(session, monkeypatch):
    killed = killing_first(monkeypatch, times=1)
    assert session.module("calc").double(21) == 42
    assert len(killed) == 1


def test_a_start_that_fails_twice_is_remembered(session, monkeypatch):
    killed = killing_first(monkeypatch, times=5)
    with pytest.raises(RuntimeError, match="The grading worker did not start") as first:
        session.module("calc").double(1)
    with pytest.raises(RuntimeError) as again:
        session.module("calc").double(2)
    assert again.value is first.value
    assert len(killed) == worker_channel.START_ATTEMPTS == 2
