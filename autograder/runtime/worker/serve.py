"""The untrusted worker's request loop: imports and runs learner code on request.

Started as ``python -s -P -B -u -m autograder.runtime.worker FD MEMORY_MB FILE_MB PLAN`` by
harness/worker_handle.WorkerHandle (or reached from zygote.py): ``serve`` applies the
confinement PLAN and the limits, reads the init frame, installs the guard and answers
``{"ok": True, "ready": ...}``, then answers each request on FD, the only protocol channel, until
it closes. Learner output goes to fds 1 and 2 (the capture file), never to FD.

Every response repeats its request's ``seq``: the harness reads any other frame as garbled and
stops the worker. What answering uses is bound before learner code runs (``_Serving``).

Design (start, the init frame, every op and response field): docs/internals/runtime.md#the-protocol.
"""

from __future__ import annotations

import os
import sys
import traceback
from multiprocessing.connection import Connection
from typing import Any


def main(argv: list[str] | None = None) -> int:
    """Serve requests on the channel fd given as the first argument until it closes."""
    import json

    args = sys.argv[1:] if argv is None else argv
    fd, memory_mb, file_mb = int(args[0]), int(args[1]), int(args[2])
    plan = json.loads(args[3]) if len(args) > 3 else {}
    return serve(fd, memory_mb, file_mb, plan)


def serve(fd: int, memory_mb: int, file_mb: int, plan: dict[str, Any]) -> int:
    """Confine this process by ``plan``, apply the limits, then answer requests on ``fd`` until
    it closes. A fresh worker (main) and one forked by the zygote (zygote.py) both end here."""
    from autograder.runtime.worker.confine import apply_worker_limits, confine

    sys.dont_write_bytecode = True
    confined = confine(plan)
    apply_worker_limits(memory_mb, file_mb)
    conn = Connection(fd)
    _stack_on_request()

    from autograder.runtime.shared import wire
    from autograder.runtime.worker.handler import RequestHandler

    init = wire.loads(conn.recv_bytes())
    worker = RequestHandler(init, memory_mb=memory_mb)

    def progress(tree: dict[str, Any]) -> None:  # between the parts of one request (op_chain)
        _restore_streams()
        conn.send_bytes(wire.dumps(tree))

    worker.progress = progress
    ready = {**worker.ready_info(), "isolation": confined}
    conn.send_bytes(wire.dumps({"ok": True, "ready": ready, "cpu": _cpu(own_seconds)}))
    # Bound now, before any learner code runs: code that rebinds Worker.handle, the codec's
    # functions or this module's through sys.modules changes nothing here.
    serving = _Serving(worker.handle, wire.loads, wire.dumps, own_seconds)
    receive, send, respond = conn.recv_bytes, conn.send_bytes, _respond
    while True:
        try:
            frame = receive()
        except (EOFError, OSError):
            return 0
        send(respond(serving, frame))


def _stack_on_request() -> None:
    """Write the Python stack of every thread to fd 2 (the capture file) on the signal the
    harness sends before it kills a call that ran out of time (harness/stopped_at.py)."""
    import faulthandler
    import signal

    try:
        faulthandler.register(signal.SIGUSR2, file=sys.__stderr__, all_threads=True)
    except (AttributeError, ValueError, OSError, RuntimeError):
        pass  # no such signal here, or no stderr: a time-out then names no line


class _Serving:
    """What answering a request uses, bound before learner code runs."""

    def __init__(self, handle: Any, loads: Any, dumps: Any, own_seconds: Any) -> None:
        self.handle, self.loads, self.dumps, self.own_seconds = handle, loads, dumps, own_seconds


def _respond(serving: _Serving, frame: bytes) -> bytes:
    seq = None
    loads, dumps, own_seconds = serving.loads, serving.dumps, serving.own_seconds
    try:
        request = loads(frame)
        seq = request.get("seq") if isinstance(request, dict) else None
        response = serving.handle(request)
    except BaseException:
        response = {"ok": False, "internal": traceback.format_exc(limit=-8)}
    response["seq"] = seq
    response["cpu"] = _cpu(own_seconds)  # where the next request's CPU time starts (cpu_time.py)
    _restore_streams()
    try:
        return dumps(response)
    except MemoryError:
        error = {
            "kind": "memory",
            "exc_type": "MemoryError",
            "message": "",
            "feedback": "The result was too large to send back within the memory limit.",
        }
        forbidden = response.get("forbidden", [])
        answer = {"ok": False, "error": error, "forbidden": forbidden, "seq": seq}
        return dumps({**answer, "cpu": response["cpu"]})


def _cpu(own_seconds: Any) -> float:
    """This process's CPU seconds, or -1.0 (no count: the harness then times the next request
    by the wall clock) when learner code broke what os.times returns."""
    try:
        return float(own_seconds())
    except Exception:
        return -1.0


def own_seconds() -> float:
    """This process's user + system CPU seconds, all threads and the children it waited for
    (what harness/cpu_time.tree_seconds counts of it), for its answers."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _restore_streams() -> None:
    """Flush learner output and undo any replacement of sys.stdout / sys.stderr."""
    for name in ("stdout", "stderr"):
        original = getattr(sys, f"__{name}__")
        current = getattr(sys, name)
        for stream in {id(current): current, id(original): original}.values():
            try:
                stream.flush()
            except Exception:
                pass
        setattr(sys, name, original)
