"""How a request about several parts names each one, and the progress frames that say which runs.

A fused request (``LearnerSession.build``, ``chain``, ``set_standins``) runs several of the
learner's calls in one round trip. A learner error names the part the worker says failed; a
time-out or crash names the part its last progress frame announced (worker/handler.op_chain).
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.runtime.harness.worker_text import defused
from autograder.runtime.shared import wire


class PartLabels:
    """How a request about several parts names each one."""

    def label(self, part: int, type_name: str | None = None) -> str | None:
        raise NotImplementedError


class ChainLabels(PartLabels):
    """set_standins and chain: the labels of the first parts, known before the request (each
    stand-in's ``Setting EncoderLayer.self_attn``, or a chain's first call
    ``MultiHeadAttention(...)``), then each step as a method call of the object's type
    (``MultiHeadAttention.eval(...)``), as RemoteMethod names it; the type of an object the
    first call builds comes with the worker's answer or progress frame."""

    def __init__(self, first: Sequence[str], names: Sequence[str], type_name: str | None):
        self.first = list(first)
        self.names = list(names)
        self.type_name = type_name

    @property
    def first_label(self) -> str:
        return self.label(0) or "object"

    def label(self, part: int, type_name: str | None = None) -> str | None:
        if 0 <= part < len(self.first):
            return self.first[part]
        part -= len(self.first)
        if not 0 <= part < len(self.names):
            return None
        short = (type_name or self.type_name or "object").rsplit(".", 1)[-1]
        return f"{short}.{self.names[part]}(...)"


class ProgressFrames:
    """The progress frames of one request (worker/handler.op_chain): the part now running and
    the type of the object it is about. A frame that is not a well-formed, forward-moving
    progress frame is left for the caller to read as the answer (or reject as garbled)."""

    def __init__(self) -> None:
        self.part = 0
        self.type_name: str | None = None

    def read(self, frame: bytes, labels: PartLabels) -> bool:
        if b"progress" not in frame:
            return False
        try:
            tree = wire.loads(frame, max_depth=4)
        except wire.WireError:
            return False
        if not isinstance(tree, dict) or set(tree) != {"progress", "type"}:
            return False
        part, type_name = tree["progress"], tree["type"]
        if type(part) is not int or part <= self.part or type(type_name) is not str:
            return False
        if labels.label(part, type_name) is None or len(type_name) > 1000:
            return False
        self.part, self.type_name = part, defused(type_name)
        return True
