"""A Ctrl-C while grade-class starts its session process is raised only once the process has a
pid, so that the command can stop it (raised inside start(), the process would still be forked
by the fork server and would grade on with nobody to stop it)."""

from __future__ import annotations

import os
import signal

import pytest

from autograder.batch.launch import _start_uninterrupted


class SlowStart:
    """A process whose start() is interrupted halfway, as a fork server's can be."""

    pid: int | None = None

    def start(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the Ctrl-C, delivered at once to this thread
        self.pid = 12345  # start() still ran to its end


def test_a_ctrl_c_during_start_is_raised_after_the_pid_is_known() -> None:
    process = SlowStart()
    with pytest.raises(KeyboardInterrupt):
        _start_uninterrupted(process)  # type: ignore[arg-type]
    assert process.pid == 12345
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored
