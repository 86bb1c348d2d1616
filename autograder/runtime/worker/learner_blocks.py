"""Running learner code in the worker: its exceptions become LearnerError fields.

Learner code runs only inside ``learner_block``; any exception raised outside one is a bug of
the framework or grader and is reported as ``internal``. The checks here turn what a call
returned into the learner's mistake when the grader cannot use it.
"""

from __future__ import annotations

from typing import Any

import torch

from autograder.runtime.shared import messages, wire
from autograder.runtime.worker.importer import ImportFailure


class LearnerFailed(Exception):
    """Learner code failed; ``error`` holds the LearnerError fields."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", ""))
        self.error = error


class learner_block:
    """Run a block of learner code: its exceptions become LearnerFailed with the error fields.

    ``worker``: the RequestHandler (its ``describe`` and ``home``, the file of the object the
    request is about).

    WireError (raised by the codec, not by learner code) and our own failures pass through.
    Inside the block the guard records forbidden calls even with no learner frame on the stack
    (guard.learner_code), against the file of the object the request is about.
    """

    def __init__(self, worker: Any, phase: str) -> None:
        self.worker = worker
        self.phase = phase
        self.recording = worker.guard.learner_code(getattr(worker, "home", None))

    def __enter__(self) -> None:
        self.recording.__enter__()
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        self.recording.__exit__(None, None, None)
        if exc is None or isinstance(exc, (wire.WireError, LearnerFailed, ImportFailure)):
            return False
        raise LearnerFailed(self.worker.describe(exc, self.phase)) from None


def expect_instance(called: Any, result: Any) -> None:
    """A class whose call gave no instance of it (``__new__`` returning 42): the learner's
    mistake, named at the constructor; the grader would otherwise fail calling its methods.
    Read through type's own descriptors, so no learner code (a metaclass) runs."""
    if not issubclass(type(called), type):  # type(): no learner __class__ property
        return
    try:
        mro = type.__dict__["__mro__"].__get__(type(result))
    except Exception:
        return
    if called not in mro:
        reason = messages.a_type(result)
        raise LearnerFailed({**bad_return(reason), "feedback_template": "NOT_AN_OBJECT"})


def first_tensor(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value
    items = value.values() if isinstance(value, dict) else value
    if isinstance(items, (list, tuple)) or isinstance(value, dict):
        for item in items:
            found = first_tensor(item)
            if found is not None:
                return found
    return None


def check_output(output: torch.Tensor | None, cotangent: Any) -> None:
    if output is None:
        raise LearnerFailed({**bad_return(""), "feedback_template": "NO_TENSOR"})
    if isinstance(cotangent, torch.Tensor) and tuple(output.shape) != tuple(cotangent.shape):
        reason = (
            f"its first output has shape {tuple(output.shape)}, expected {tuple(cotangent.shape)}"
        )
        raise LearnerFailed(bad_return(reason))
    if not output.requires_grad:
        raise LearnerFailed({**bad_return(""), "feedback_template": "NOT_CONNECTED"})


def bad_return(reason: str) -> dict[str, Any]:
    return {
        "kind": "bad_return",
        "exc_type": "",
        "exc_mro": [],
        "message": messages.sanitize(reason),
        "reason": messages.sanitize(reason),
        "location": "",
        "traceback": "",
    }
