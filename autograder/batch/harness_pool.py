"""The harness children of a batch's session process: forked, given learners, reaped.

BatchSession is the session process's side (batch/session_process.py runs pytest with it). It forks
harness children, ``jobs`` at a time, each on the CPU the fewest running children use, hands
each learner to an idle one, records a learner whose child died without a grade, and reports
each learner done on ``progress``.

A child grades each learner it is given through the one path (learner_job.grade_learner, then
grading/one_submission.grade_in_session) in the session its parent collected. It stops when the
session closes its channel, after LEARNERS_PER_CHILD learners, or when a learner's run left the
session unfit for another.

Design: docs/internals/runtime.md#a-batch-session.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import tempfile
import threading
from collections import deque
from dataclasses import dataclass
from functools import partial
from multiprocessing import Pipe
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from autograder.batch.learner_job import error_record, failed_record, grade_learner
from autograder.batch.processes import exit_with_parent, process_alive, remove_folder
from autograder.gradebook.roster import Learner
from autograder.gradebook.settings import JobSettings
from autograder.runtime.shared import affinity

if TYPE_CHECKING:
    from autograder.grading.graders_session import GradersSession
    from autograder.grading.one_submission import Options

EXPECTED_DIR = ".expected"  # in DIR: expected values shared by the learners' children
SCRATCH_PREFIX = "t101-grade-class-"
# A harness child grades at most this many learners, then a fresh fork of the session takes
# over: whatever a child keeps from one learner to the next (memory pytest or the graders
# hold) stays bounded, while the fork's cost is shared by many learners.
LEARNERS_PER_CHILD = 25


def _expected() -> Any:
    """autograder.expected, imported where it is used: it imports torch, which the batch command
    that imports this module for run_batch must not wait for (about 2 s before its session
    process could even start; the session process has torch from its fork server)."""
    from autograder import expected

    return expected


@dataclass
class _Harness:
    """A harness child, as the session process sees it: its channel, its learner (if busy)."""

    pid: int
    conn: Connection
    cpu: int | None = None
    learner: Learner | None = None
    graded: int = 0


class BatchSession:
    """pytest plugin: where pytest would run the collected tests, fork the harness children
    (`jobs` at a time) and hand each learner to one."""

    def __init__(
        self,
        settings: JobSettings,
        learners: list[Learner],
        jobs: int,
        progress: Connection,
        scratch: Path | None = None,
    ) -> None:
        self.settings = settings
        self.learners = learners
        self.jobs = jobs
        self.progress = progress
        self.pid = os.getpid()
        #: the pytest plugin of the batch's session (collection, then grade_all below) and
        #: what every learner is graded with: both set once the course is read (_run)
        self.graders: GradersSession | None = None
        self.options: Options | None = None
        self.reusable = False  # in a child: whether its last learner's run left it fit for more
        self.running: dict[int, _Harness] = {}
        # Each child runs on one of these, its workers with it (runtime/shared/affinity.py); with
        # one CPU or none known there is nothing to choose.
        allowed = affinity.allowed()
        self.cpus = allowed if len(allowed) > 1 else []
        # Held while a child is forked and while the children are stopped (from the thread that
        # sees the command gone, or from the SIGTERM handler, hence reentrant): a child is
        # either forked before the stop, and killed by it, or never forked.
        self._forking = threading.RLock()
        self.stopping = False
        # Every temporary folder of this batch (exported commits, the workers' private copies,
        # notebook sandboxes) is made in here, so that a stopped run leaves none behind.
        self.scratch = scratch or Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
        tempfile.tempdir = str(self.scratch)
        # Hidden from learner code with the rest of DIR (pytest_args' hide).
        self.expected = settings.out / EXPECTED_DIR

    # -- the session process -----------------------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether the graders were collected and learners handed out."""
        return self.graders is not None and self.graders.started

    def grade_all(self, session: pytest.Session) -> None:
        """Where pytest would run the collected tests: fork the harness children and hand each
        learner to one, until every learner is done or the batch is stopped."""
        # As `grade` does (commands/grade.py): what the session holds by now (torch, pytest, the
        # collected graders) is left out of later garbage collections, among them pytest's
        # full ones as the session ends, which took 0.27 s after the class's last learner.
        gc.freeze()
        signal.signal(signal.SIGTERM, self._stop)
        queue = deque(range(len(self.learners)))
        try:
            while self._more(queue) or any(h.learner is not None for h in self.running.values()):
                for harness in list(self.running.values()):
                    if harness.learner is None:
                        if self._more(queue):
                            self._give(harness, queue)
                        else:
                            self._reap(harness)
                while self._more(queue) and len(self.running) < self.jobs:
                    harness = self._fork(session)
                    if harness is None:
                        break
                    self._give(harness, queue)
                self._wait_for_children()
            for harness in list(self.running.values()):
                self._reap(harness)
        except BaseException:  # the command is gone (a broken progress pipe), or worse
            self.stop_children()
            raise

    def _more(self, queue: deque[int]) -> bool:
        """Whether learners are left to grade, and the batch goes on."""
        return bool(queue) and not self.stopping and self._command_alive()

    def _fork(self, session: pytest.Session) -> _Harness | None:
        """A new harness child (None when the batch is being stopped)."""
        _expected().refresh()  # what earlier children computed: inherited by this one
        ours, theirs = Pipe()
        cpu = self._least_used_cpu()
        with self._forking:
            if self.stopping:
                return None
            sys.stdout.flush()  # the session's console: a child must not write its buffer again
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                ours.close()
                self._child(session, theirs, cpu)  # never returns
            theirs.close()
            self.running[pid] = harness = _Harness(pid, ours, cpu)
        return harness

    def _least_used_cpu(self) -> int | None:
        """The CPU the fewest running children run on (the lowest of those), for a new one."""
        if not self.cpus:
            return None
        taken = [harness.cpu for harness in self.running.values()]
        return min(self.cpus, key=lambda cpu: (taken.count(cpu), cpu))

    def _give(self, harness: _Harness, queue: deque[int]) -> None:
        index = queue.popleft()
        try:
            harness.conn.send(index)
        except OSError:  # it died while idle: the learner goes to another child
            queue.appendleft(index)
            self._reap(harness)
            return
        harness.learner = self.learners[index]

    def _wait_for_children(self) -> None:
        """Until a child says it has committed its learner's folder, or a child ends."""
        by_conn = {harness.conn: harness for harness in self.running.values()}
        if not by_conn:
            return
        for conn in wait(list(by_conn)):
            harness = by_conn[conn]
            try:
                clean = conn.recv()
            except (EOFError, OSError):  # it died
                self._reap(harness)
                continue
            learner, harness.learner = harness.learner, None
            harness.graded += 1
            if learner is not None:
                self._done(learner, 0)
            if not clean or harness.graded >= LEARNERS_PER_CHILD:
                self._reap(harness)

    def _reap(self, harness: _Harness) -> None:
        """Close a child's channel (an idle child then ends) and collect it; the learner it was
        grading, if any, gets a row saying so."""
        harness.conn.close()
        try:
            _, status = os.waitpid(harness.pid, 0)
            code: int | None = os.waitstatus_to_exitcode(status)
        except ChildProcessError:  # collected by stop_children
            code = None
        self.running.pop(harness.pid, None)
        if harness.learner is not None:
            self._done(harness.learner, code)

    def _command_alive(self) -> bool:
        return process_alive(self.settings.parent_pid)

    def _done(self, learner: Learner, code: int) -> None:
        if not self._command_alive():
            return  # the child ended because the command is gone: no row (the rerun grades it)
        failed_record(self.settings, learner, code)
        self.progress.send(learner.id)

    def not_graded(self, reason: str) -> None:
        """Every learner's row says why the graders could not run."""
        for learner in self.learners:
            error_record(self.settings, learner, reason, reusable=False)
            self.progress.send(learner.id)

    def _stop(self, signum: int, frame: Any) -> None:
        """Stopped by the batch command (Ctrl-C there): stop the learners being graded now."""
        try:
            self.shut_down()
        finally:
            os._exit(128 + signum)

    def shut_down(self) -> None:
        """The learners' children being graded now are killed; the batch's scratch and the
        shared expected values removed."""
        self.stop_children()
        self.remove_scratch()
        self.remove_expected()

    def stop_children(self) -> None:
        """Kill the learners' children being graded now and wait for them (never in a child)."""
        if os.getpid() != self.pid:
            return
        with self._forking:
            self.stopping = True
            children = list(self.running)
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass

    def remove_scratch(self) -> None:
        if os.getpid() == self.pid:
            remove_folder(self.scratch)

    def remove_expected(self) -> None:
        """The shared expected values go with the batch (never in a child)."""
        if os.getpid() == self.pid:
            _expected().use_folder(None)
            remove_folder(self.expected)

    # -- a harness child -----------------------------------------------------------------------

    def _child(self, session: pytest.Session, conn: Connection, cpu: int | None) -> None:
        """A harness child: grade each learner the session sends, in this one pytest session,
        until the session closes the channel or a learner's run leaves the session unfit for
        another. It runs on ``cpu`` (None: anywhere), and so do its workers."""
        code = 1
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            if cpu is not None:
                affinity.run_on([cpu])
            self.progress.close()
            for sibling in self.running.values():  # else a sibling would not see its channel close
                sibling.conn.close()
            # Gone with the command or with this session (its scratch is removed then).
            exit_with_parent(self.settings.parent_pid, self._orphaned, ppid=self.pid)
            gc.freeze()  # the collected session and torch are never garbage
            grade = partial(self._grade, session)
            while True:
                try:
                    index = conn.recv()
                except EOFError:
                    break
                _expected().refresh()  # what other children computed meanwhile
                self.reusable = False  # until the learner's run says otherwise
                grade_learner(self.settings, self.learners[index], grade, self._wanted)
                conn.send(self.reusable)
                if not self.reusable:
                    break
            code = 0
        except BaseException:  # the parent records the death; nothing may unwind into pytest
            pass
        finally:
            try:
                sys.stdout.flush()
            finally:
                os._exit(code)

    def _orphaned(self) -> None:
        """In a child whose session process was killed: the command removed the scratch while
        this child may still have been writing in it; remove what is left on the way out."""
        if os.getppid() != self.pid:
            remove_folder(self.scratch)

    def _wanted(self) -> bool:
        """In a child: whether its grade is still wanted (the session and the command live)."""
        return os.getppid() == self.pid and process_alive(self.settings.parent_pid)

    def _grade(
        self, session: pytest.Session, config, folder: Path, staged: Path, name: str, graded=None
    ):
        """Run the collected tests on this learner's submission; their reports into staged
        (``graded``: the commit, results.GradedCommit, that they name)."""
        from autograder.grading.one_submission import Submission, grade_in_session

        # An exported commit lives in a scratch folder removed after the run: the log names
        # the learner and the commit instead.
        shown = None if graded is None else f"{name} at commit {graded.commit}"
        submission = Submission(folder, name, staged, shown=shown, graded=graded)
        done = grade_in_session(session, self.options, submission, self.graders.events)
        self.reusable = done.reusable
        return done.outcome
