"""The warm fork server ("zygote") of the untrusted worker: torch imported once, a fork each.

Started once per grading command (harness/zygote_client.serving) as ``python -s -P -B -u -m
autograder.runtime.worker.zygote LISTEN_FD FOLDER``, with the worker's allow-listed environment.
It imports numpy, torch and the worker's code, then only forks: one ``SOCK_SEQPACKET``
connection per worker, a JSON request with two descriptors in, ``{"pid"}`` then ``{"exit"}`` (or
``{"error"}``) out. The forked child does what a fresh worker does before
learner code runs (``_become_worker``), then ``serve.serve``.

Invariant: it never receives a grader, a reference, a course file or learner code (a request
holds a folder name, an environment, limits, a confinement plan and CPU numbers), and it forks
only while it runs one thread (a fork copies only the calling thread). It exits, killing its
workers and removing FOLDER, when its stdin reaches end of file; a closed connection kills that
worker's process group.

Design: docs/internals/runtime.md#the-fork-server; why it is safe: SECURITY.md, "Warm workers".
"""

from __future__ import annotations

import json
import os
import random
import selectors
import signal
import socket
import sys
import tempfile
import traceback
from typing import Any, NoReturn

from autograder.runtime.shared.zygote_protocol import CONTROL_DIR, READY_FILE

MAX_REQUEST_BYTES = 1 << 20
CHANNEL_FD = 3  # where the child puts its end of the channel
NOT_SINGLE_THREADED = (
    "The worker fork server runs {threads} threads after importing the worker's libraries; "
    "a fork copies only one of them, so it forks nothing and workers start fresh."
)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    listener = socket.socket(fileno=int(args[0]))
    folder = args[1] if len(args) > 1 else None
    _warm_up()
    threads = thread_count()
    if threads != 1:
        print(NOT_SINGLE_THREADED.format(threads=threads), file=sys.stderr)
        return 1
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command that started us stops us
    if folder is not None:  # from now on it may fork workers, and reads its lifeline
        with open(os.path.join(folder, CONTROL_DIR, READY_FILE), "wb"):
            pass
    code = _Server(listener).run()
    if folder is not None:  # also when the command was killed and cannot remove it
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return code


def _warm_up() -> None:
    """Import what a worker imports (the whole runtime, numpy, torch) and touch torch's CPU
    kernels once, on one thread: nothing here depends on a learner or a course."""
    import numpy
    import numpy.random  # numpy loads it lazily: else in every worker, at its seeding (17 ms)
    import torch

    import autograder.runtime.shared.affinity
    import autograder.runtime.shared.wire
    import autograder.runtime.worker.confine
    import autograder.runtime.worker.describe
    import autograder.runtime.worker.guard
    import autograder.runtime.worker.handler
    import autograder.runtime.worker.importer
    import autograder.runtime.worker.serve  # noqa: F401

    torch.set_num_threads(1)
    x = torch.ones(2, 3)
    torch.softmax(x @ x.T, dim=-1)
    torch.nn.functional.layer_norm(x, (3,))
    numpy.ones((2, 2)) @ numpy.ones((2, 2))


def thread_count() -> int:
    """Threads of this process (from /proc); 0 when /proc cannot tell."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


class _Server:
    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.pid_of: dict[socket.socket, int] = {}  # connection -> its worker
        self.conn_of: dict[int, socket.socket | None] = {}  # live worker -> its connection
        self.pidfds: dict[int, int] = {}

    def run(self) -> int:
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        self.selector.register(0, selectors.EVENT_READ, ("lifeline", None))
        while True:
            for key, _ in self.selector.select():
                kind, item = key.data
                if kind == "accept":
                    conn, _ = self.listener.accept()
                    self.selector.register(conn, selectors.EVENT_READ, ("request", conn))
                elif kind == "request":
                    self._on_request(item)
                elif kind == "exit":
                    self._on_exit(item)
                elif not os.read(0, 4096):  # the lifeline closed: the command is gone
                    for pid in list(self.conn_of):
                        _kill_group(pid)
                    return 0

    def _on_request(self, conn: socket.socket) -> None:
        try:
            data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST_BYTES, 2)
        except OSError:
            data, fds = b"", []
        if not data or conn in self.pid_of:  # hung up (or a second request): end its worker
            for fd in fds:
                os.close(fd)
            self._hang_up(conn)
            return
        try:
            if len(fds) != 2:
                raise ValueError("expected two descriptors")
            request = json.loads(data)
            threads = thread_count()
            if threads != 1:
                _reply(conn, {"error": NOT_SINGLE_THREADED.format(threads=threads)})
                return
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            pid = os.fork()
            if pid == 0:
                _become_worker(request, fds[0], fds[1])
        except (ValueError, OSError) as error:
            _reply(conn, {"error": f"The worker fork server could not fork a worker: {error}."})
            return
        finally:
            for fd in fds:
                os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.pidfds[pid] = pidfd
        self.selector.register(pidfd, selectors.EVENT_READ, ("exit", pid))
        self.pid_of[conn] = pid
        self.conn_of[pid] = conn
        _reply(conn, {"pid": pid})

    def _on_exit(self, pid: int) -> None:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            return
        pidfd = self.pidfds.pop(pid)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        conn = self.conn_of.pop(pid, None)
        if conn is not None:
            _reply(conn, {"exit": os.waitstatus_to_exitcode(status)})

    def _hang_up(self, conn: socket.socket) -> None:
        pid = self.pid_of.pop(conn, None)
        if pid is not None and pid in self.conn_of:
            self.conn_of[pid] = None
            _kill_group(pid)  # the exit event reaps it
        self.selector.unregister(conn)
        conn.close()


def _reply(conn: socket.socket, message: dict[str, Any]) -> None:
    try:
        conn.send(json.dumps(message).encode())
    except OSError:
        pass


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):  # the group, or the child before its setsid()
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _become_worker(request: dict[str, Any], channel: int, capture: int) -> NoReturn:
    """In the forked child: become the worker a fresh ``python -m autograder.runtime.worker``
    would be, then serve. Never returns."""
    code = 70
    try:
        from autograder.runtime.shared import affinity

        affinity.run_on(request.get("cpus") or ())
        os.setsid()  # its own session and process group, as start_new_session=True gives
        signal.signal(signal.SIGINT, signal.default_int_handler)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(capture, 1)
        os.dup2(capture, 2)
        os.dup2(channel, CHANNEL_FD)
        os.closerange(CHANNEL_FD + 1, 65536)  # the listener, the other workers' connections
        os.chdir(request["root"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # TMPDIR is this learner's folder now
        random.seed()
        import numpy

        numpy.random.seed()
        from autograder.runtime.shared.confinement import PROCESS_GROUP
        from autograder.runtime.worker import confine, serve

        confine.enter_namespaces(request["plan"].get("level", PROCESS_GROUP))
        code = serve.serve(CHANNEL_FD, request["memory_mb"], request["file_mb"], request["plan"])
    except BaseException:
        try:
            traceback.print_exc()
        except BaseException:
            pass
    finally:
        _exit(code)


def _exit(code: int) -> NoReturn:
    """End the process (the zygote, or a worker forked from it) without the interpreter's
    teardown: freeing torch's modules one by one took 0.7 to 1.1 s, and the command that stopped
    the zygote waits for its exit. Nothing is lost: the zygote kills its workers and removes
    FOLDER before, and writes no file but its log; stdout and stderr are flushed here."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    os._exit(code)


if __name__ == "__main__":
    _exit(main())
