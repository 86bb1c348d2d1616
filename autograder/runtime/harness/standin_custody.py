"""Which worker was handed the course's stand-ins, and when it must give way to a fresh one.

Learner code can keep a stand-in it is handed (set_standins, stand_in_function) and call it in
a later request of the same worker. Within one stage the graders' order keeps a part's own tests
before any test that hands its stand-in; the next stage starts again at the first component.

So a worker handed a stand-in never runs a test of another stage: ``begin_stage`` stops it, and
the next request starts a fresh worker (a new process, a fresh private copy). The stand-ins
file's text goes only with the requests that set one: a worker loads it at the first.

Learner code in the worker can read that text (the request carries it) and the stand-ins' code,
and copy them into what it prints or raises. A request that sets a function stand-in carries the
file without its classes (``functions_only``: a course writes its function stand-ins so that
their code tells nothing a learner may not use); from the request that carries the whole file,
for module stand-ins, until that worker is replaced, no text of the worker's reaches the
learner: its output is withheld and its errors are told as in a hidden test (``withheld``).

Design: docs/internals/runtime.md#stand-ins-in-the-worker.
"""

from __future__ import annotations

import ast
import functools
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
        #: What a request setting a function stand-in carries (None: the whole file).
        self.function_text = functions_only(text) if text else None
        self._channel = channel
        channel.output_withheld = self.withheld  # the worker's output follows the same rule
        #: The stage of the running test ("visible", "hidden"; None: not said).
        self.stage: str | None = None
        #: (worker generation, stage) of the last request that handed a worker a stand-in.
        self.handed: tuple[int, str | None] | None = None
        #: The worker generation that was sent the whole file (None: none was).
        self.whole_file_sent: int | None = None
        self._sending_whole_file = False

    def fields(self, *, functions: bool = False) -> dict[str, Any]:
        """The fields a request that sets a stand-in carries: the file's text, when there is one
        (``functions``: for a function stand-in, without the file's classes, unless this worker
        has the whole file already)."""
        if not self.text:
            return {}
        if functions and self.function_text is not None and not self.withheld():
            return {"standins": self.function_text}
        return {"standins": self.text}

    def withheld(self) -> bool:
        """Whether no text of the running worker may reach the learner: it was sent the whole
        stand-ins file (or is being sent it now)."""
        if self._sending_whole_file:
            return True
        worker_running = self._channel.worker is not None
        return worker_running and self.whole_file_sent == self._channel.generation

    @contextmanager
    def handing(self, *, functions: bool = False) -> Iterator[None]:
        """Around a request that may hand the worker a stand-in: whatever its outcome (a part
        may be set before another fails), the worker that got it counts as handed one; one sent
        the whole file (module stand-ins, ``functions`` False) counts as withheld."""
        whole = not functions or self.function_text is None
        self._sending_whole_file = whole
        try:
            yield
        finally:
            self._sending_whole_file = False
            self.handed = (self._channel.generation, self.stage)
            if whole:
                self.whole_file_sent = self._channel.generation

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
    with session._custody.handing(functions=True):
        fields.update(session._custody.fields(functions=True))
        response = session._run("stand_in_function", ["module", module, name], label, fields)
    return bool(session._decode(response["value"], label))


@functools.lru_cache(maxsize=4)
def functions_only(text: str) -> str | None:
    """The stand-ins file's text without its classes (KINDS emptied), for a request that sets a
    function stand-in; None when that text does not parse or load as a stand-ins file. Cached:
    a batch makes a session per learner and stage from the same file."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    body = [node for node in tree.body if not isinstance(node, ast.ClassDef | ast.Expr)]
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):  # no docstring goes either
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _docstring(node):
            node.body = node.body[1:] or [ast.Pass()]
    for index, node in enumerate(body):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "KINDS" for t in targets):
            body[index] = ast.parse("KINDS = {}").body[0]
    reduced = ast.unparse(ast.Module(body=body, type_ignores=[]))
    try:
        standin_registry.load(reduced)
    except Exception:  # a function stand-in that needs a class: the whole file goes
        return None
    return reduced


def _docstring(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = node.body[0] if node.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
