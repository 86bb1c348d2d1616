"""The error a learner's code produces, as the trusted side sees it."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Kinds of LearnerError. Graders and reports branch on these names.
KINDS = (
    "not_implemented",  # the component still raises NotImplementedError
    "exception",  # learner code raised an ordinary exception
    "syntax_error",  # a learner module does not parse
    "import_error",  # importing a learner module raised, or the module is missing
    "timeout",  # a call or an import exceeded its time limit
    "crash",  # the worker process died (segfault, os._exit, killed)
    "exit",  # learner code raised SystemExit or KeyboardInterrupt
    "memory",  # MemoryError under the worker's memory limit
    "disk",  # learner code wrote more than the worker's disk quota
    "forbidden",  # learner code called an API the course forbids
    "bad_return",  # the value returned cannot cross the boundary (e.g. object arrays)
    "tampered",  # learner code changed the worker: its recorders, handler, codec or channel
)


@dataclass
class LearnerError(Exception):
    """Something went wrong inside learner code, described for the learner.

    Attributes:
        kind: one of KINDS.
        feedback: one or two full sentences a learner can act on, naming their file and line;
            never a frame of the grader, never the grader's inputs.
        exc_type: the exception class name raised in the worker ("" when not an exception).
        exc_mro: names of that class and its bases, e.g. ("ValueError", "Exception", ...), so a
            grader can check "raises ValueError" across the process boundary.
        message: the exception's own message, sanitized and capped.
        location: "assignments/t101/attention.py:42 in scaled_dot_product_attention" or "".
        traceback: the learner-code frames only, as text (may be "").
        forbidden: for kind "forbidden", the (api, "file.py", line) records observed.
        file: the course module the error was raised in ("assignments/t101/encoder.py"), one
            of the course's few files, in a hidden test too (where location is ""); "" when
            the location is none of them.
    """

    kind: str
    feedback: str
    exc_type: str = ""
    exc_mro: tuple[str, ...] = ()
    message: str = ""
    location: str = ""
    traceback: str = ""
    forbidden: tuple[tuple[str, str, int], ...] = field(default=())
    file: str = ""

    def __post_init__(self) -> None:
        super().__init__(self.feedback)

    def __str__(self) -> str:
        return self.feedback

    def is_instance(self, exc_name: str) -> bool:
        """True when the learner's exception was an instance of the class named exc_name."""
        return exc_name in self.exc_mro
