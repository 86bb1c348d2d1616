"""Which worker was handed the course's stand-ins, and when it must give way to a fresh one.

Learner code can keep a stand-in it is handed (set_standins, stand_in_function) and call it in
a later request of the same worker. Within one stage the graders' order keeps a part's own tests
before any test that hands its stand-in; the next stage starts again at the first component.

So a worker handed a stand-in never runs a test of another stage: ``begin_stage`` stops it, and
the next request starts a fresh worker (a new process, a fresh private copy). The stand-ins
file's text goes only with the requests that set one: a worker loads it at the first.

Design: docs/internals/runtime.md#stand-ins-in-the-worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from autograder.runtime.harness.worker_channel import WorkerChannel
from autograder.runtime.shared import standin_registry
from autograder.runtime.shared.errors import LearnerError

if TYPE_CHECKING:
    from autograder.runtime.harness.learner_session import LearnerSession


class StandInCustody:
    """The course's stand-ins file (``text``, or None) on the harness's side of one session."""

    def __init__(self, text: str | None, channel: WorkerChannel) -> None:
        self.text = text
        #: The harness's own registry (its twins of the stand-ins it sets), or None.
        self.registry = standin_registry.load(text) if text else None
        self._channel = channel
        #: The stage of the running test ("visible", "hidden"; None: not said).
        self.stage: str | None = None
        #: (worker generation, stage) of the last request that handed a worker a stand-in.
        self.handed: tuple[int, str | None] | None = None

    def fields(self) -> dict[str, Any]:
        """The fields a request that sets a stand-in carries: the file's text, when there is one."""
        return {"standins": self.text} if self.text else {}

    @contextmanager
    def handing(self) -> Iterator[None]:
        """Around a request that may hand the worker a stand-in: whatever its outcome (a part
        may be set before another fails), the worker that got it counts as handed one."""
        try:
            yield
        finally:
            self.handed = (self._channel.generation, self.stage)

    def begin_stage(self, stage: str | None) -> bool:
        """A test of ``stage`` begins (None: the same stage as before). Stops the worker when it
        was handed a stand-in in another stage; returns whether it did."""
        if stage is None:
            return False
        self.stage = stage
        if self.handed is None or self._channel.worker is None:
            return False
        generation, handed_in = self.handed
        if generation != self._channel.generation or handed_in == stage:
            return False
        self.handed = None
        self._channel.stop()
        return True


def stand_in_function(
    session: LearnerSession, module: str, name: str, *, source: str, kind: str
) -> bool:
    """LearnerSession.stand_in_function: whether the function stand-in ``kind`` replaced
    ``source``'s ``name`` in ``module`` (False when ``source`` does not import)."""
    try:
        session._imports.ensure_module(source)
    except LearnerError:
        return False
    label = f"Setting {module}.{name} to a known-good {kind}"
    fields = {"module": module, "source": source, "name": name, "kind": kind}
    with session._custody.handing():
        fields.update(session._custody.fields())
        response = session._run("stand_in_function", ["module", module, name], label, fields)
    return bool(session._decode(response["value"], label))
