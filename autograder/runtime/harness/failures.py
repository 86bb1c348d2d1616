"""The LearnerErrors the harness side builds.

Time-outs, crashes, forbidden calls, lost objects, and errors the worker described (whose
sentence needs the learner-facing call); and MachineBusy, the one failure here that is not the
learner's."""

from __future__ import annotations

from typing import Any

from autograder.feedback import is_hidden
from autograder.runtime.harness.limits import Limits
from autograder.runtime.harness.part_labels import PartLabels
from autograder.runtime.harness.worker_text import defused_fields
from autograder.runtime.shared import messages
from autograder.runtime.shared.errors import LearnerError
from autograder.runtime.shared.messages import compose
from autograder.runtime.shared.wire import FrameExpands, WireError

Record = tuple[str, str, int]
#: Call labels of imports start with this; timeouts of imports get their own sentence.
IMPORT_LABEL = "the import of "


HIDDEN_INTERNAL = (
    "(its traceback is not kept in a hidden test, or beside the course's stand-ins: learner code "
    "could write it)"
)
#: The kinds of error a worker describes (worker/describe.classify, its importer and codec);
#: any other kind an answer names is told as "exception": the harness makes the rest itself.
WORKER_KINDS = frozenset(
    ["not_implemented", "exception", "syntax_error", "import_error"]
    + ["exit", "memory", "disk", "bad_return"]
)


def from_worker(
    error: dict[str, Any],
    label: str,
    limits: Limits | None = None,
    module_files: frozenset[str] = frozenset(),
    withheld: bool = False,
) -> LearnerError:
    """A LearnerError from the fields the worker sent, for the call named ``label``.

    Every field is learner-forgeable (learner code can rewrite the worker's answers), so the
    kind is one of WORKER_KINDS, and in a hidden test the sentence is hidden_sentence's, built
    from checked fields alone, with no line or traceback kept; ``message`` is kept for graders
    (``expect_raises``), which must not show it. ``limits``: the harness's own, for the sizes a
    memory or disk sentence names; ``module_files``: the course's module files as messages name
    them ("assignments/t101/softmax.py"), the only files a hidden sentence may name.
    ``withheld``: the worker holds the course's stand-ins (standin_custody.py), whose text learner
    code could copy into any field: the sentence is hidden_sentence's in a visible test too, and
    the exception's class is named as a hidden test names it. Every string field is defused
    first (worker_text.py): no report reads a named mistake or "not implemented" from it."""
    error = defused_fields(error)
    kind = error.get("kind")
    kind = kind if kind in WORKER_KINDS else "exception"
    hidden = is_hidden() or withheld
    exc_type = str(error.get("exc_type", ""))
    if withheld and exc_type:
        mro = [str(name) for name in error.get("exc_mro", ())][:64]
        exc_type = messages.hidden_class_name(exc_type, mro)
    return LearnerError(
        kind=kind,
        feedback=(
            hidden_sentence(error, kind, label, limits, module_files)
            if hidden
            else compose(error, label)
        ),
        exc_type=exc_type,
        exc_mro=tuple(str(name) for name in error.get("exc_mro", ())),
        message=str(error.get("message", "")),
        location="" if hidden else str(error.get("location", "")),
        traceback="" if hidden else str(error.get("traceback", "")),
        file=checked_file(error.get("location"), module_files),
    )


def hidden_sentence(
    error: dict[str, Any],
    kind: str,
    label: str,
    limits: Limits | None,
    module_files: frozenset[str] = frozenset(),
) -> str:
    """The sentence of a worker's error in a hidden test, from what the harness can check: the
    kind (from WORKER_KINDS), the exception class (messages.hidden_class_name: a built-in name
    or base), a template of its own, sizes from the harness's limits, and the file of the
    error's location when it is one of ``module_files`` (a choice among the course's few files,
    never a line). No other text the worker sent (its feedback, message, line, reason or an
    import's sentence) reaches it, since learner code that saw the hidden inputs can write them
    into any of those."""
    template = error.get("feedback_template")
    checked: dict[str, Any] = {
        "kind": kind,
        "exc_type": str(error.get("exc_type", "")),
        "exc_mro": [str(name) for name in error.get("exc_mro", ())][:64],
        "memory_mb": limits.memory_mb if limits is not None else "?",
        "disk_mb": limits.disk_mb if limits is not None else "?",
        "reason": messages.HIDDEN_BAD_RETURN,
        "checked_file": checked_file(error.get("location"), module_files),
    }
    if template in ("NO_TENSOR", "NOT_CONNECTED", "NOT_AN_OBJECT"):
        checked["feedback_template"] = template
        checked["reason"] = "something else" if template == "NOT_AN_OBJECT" else ""
    return compose(checked, label, hidden=True)


def checked_file(location: object, module_files: frozenset[str]) -> str:
    """The file of a worker's ``location`` ("assignments/t101/x.py:3 in f") when it is one of
    ``module_files``; else ""."""
    file = location.split(":", 1)[0] if isinstance(location, str) else ""
    return file if file in module_files else ""


def of_failed_answer(
    response: dict[str, Any],
    label: str,
    part_labels: PartLabels | None = None,
    limits: Limits | None = None,
    module_files: frozenset[str] = frozenset(),
    withheld: bool = False,
) -> Exception:
    """What an answer with ``ok`` false means: the grader's own failure (a RuntimeError with
    the worker's traceback) or the learner's error, naming the part of a fused request the
    worker says failed (by the harness's own label in a hidden test: a type name the worker
    sends is learner text); ``withheld`` as from_worker's."""
    hidden = is_hidden() or withheld
    if "internal" in response:  # its traceback is learner-forgeable text: not in a hidden test
        shown = HIDDEN_INTERNAL if hidden else response["internal"]
        return RuntimeError(f"The grading worker failed while running {label}:\n{shown}")
    error = response["error"]
    if part_labels is not None and isinstance(error, dict):
        part, type_name = error.get("part"), error.get("type")
        type_name = None if hidden else type_name
        if type(part) is int and (type_name is None or type(type_name) is str):
            label = part_labels.label(part, type_name) or label
    return from_worker(error, label, limits, module_files, withheld)


def timeout(label: str, seconds: float) -> LearnerError:
    """``label`` ran past its limit: a call ("softmax(...)") or an import (IMPORT_LABEL + the
    file as the learner's repository names it)."""
    shown = messages.seconds(seconds)
    if label.startswith(IMPORT_LABEL):
        file = label.removeprefix(IMPORT_LABEL)
        return LearnerError("timeout", messages.IMPORT_TIMEOUT.format(file=file, seconds=shown))
    return LearnerError("timeout", messages.TIMEOUT.format(call=label, seconds=shown))


def timeout_waiting(label: str, seconds: float) -> LearnerError:
    """``label`` lasted ``seconds`` of wall time while computing for less than its CPU budget:
    it slept, waited for input or was blocked (runtime/harness/cpu_time.py)."""
    shown = messages.seconds(seconds)
    if label.startswith(IMPORT_LABEL):
        file = label.removeprefix(IMPORT_LABEL)
        sentence = messages.IMPORT_TIMEOUT_WAITING.format(file=file, seconds=shown)
    else:
        sentence = messages.TIMEOUT_WAITING.format(call=label, seconds=shown)
    return LearnerError("timeout", sentence)


class MachineBusy(Exception):
    """A call stopped at its wall limit because the machine gave it no processor, not because
    of the learner's code (answer_wait.Wait.machine_busy): a failure of the grading, which the
    pytest plugin reports as a grader error (a test that must be graded again), never as the
    learner's time-out. ``feedback``: the sentence for the learner."""

    def __init__(self, feedback: str) -> None:
        super().__init__(feedback)
        self.feedback = feedback


def machine_busy(label: str, wait: Any) -> MachineBusy:
    """``label`` was stopped at the wall limit while starved of CPU: ``wait`` (an
    answer_wait.Wait) gives the wall seconds it lasted, those it waited for a CPU and the CPU
    seconds it computed."""
    numbers = {
        "seconds": messages.seconds(round(wait.elapsed, 1)),
        "starved": messages.seconds(round(wait.starved or 0.0, 1)),
        "computed": messages.seconds(round(wait.computed or 0.0, 1)),
    }
    if label.startswith(IMPORT_LABEL):
        file = label.removeprefix(IMPORT_LABEL)
        return MachineBusy(messages.IMPORT_MACHINE_BUSY.format(file=file, **numbers))
    return MachineBusy(messages.MACHINE_BUSY.format(call=label, **numbers))


def not_run_after_hangs(label: str, count: int, seconds: float) -> LearnerError:
    """``label`` already timed out in ``count`` tests; it is not given the full limit again."""
    feedback = messages.NOT_RUN_AFTER_HANGS.format(
        call=label, count=count, seconds=messages.seconds(seconds)
    )
    return LearnerError("timeout", feedback)


def not_run_after_crashes(label: str, count: int) -> LearnerError:
    """``label`` crashed the worker (or crashed and timed out) in ``count`` tests before."""
    return LearnerError("crash", messages.NOT_RUN_AFTER_CRASHES.format(call=label, count=count))


def submission_spent(label: str, seconds: float, *, cut: bool = False) -> LearnerError:
    """The submission's wall budget (``[limits] submission_timeout``) is used up: ``label`` is
    not run, or (``cut``) was stopped when it ran out."""
    call = (
        f"Importing {label.removeprefix(IMPORT_LABEL)}" if label.startswith(IMPORT_LABEL) else label
    )
    template = messages.SUBMISSION_CUT if cut else messages.SUBMISSION_SPENT
    return LearnerError("timeout", template.format(call=call, seconds=messages.seconds(seconds)))


def crash(label: str, status: int | None, memory_mb: int) -> LearnerError:
    """The worker died while running ``label``; status < 0 is the signal that killed it."""
    if status is not None and status < 0:
        name = messages.signal_name(-status)
        why = messages.WHY_SIGNAL.get(name, "").format(mb=memory_mb)
        feedback = messages.CRASH_SIGNAL.format(call=label, signal=name, why=why)
    else:
        feedback = messages.CRASH_EXIT.format(call=label, status=status)
    return LearnerError(kind="crash", feedback=feedback)


def how_it_ended(status: int | None) -> str:
    """How a worker that stopped answering ended, for TAMPERED_EVIDENCE: the signal that killed
    it or its exit status, when the harness saw them."""
    if status is not None and status < 0:
        return messages.BROKE_SIGNAL.format(signal=messages.signal_name(-status))
    if status is not None:
        return messages.BROKE_EXIT.format(status=status)
    return messages.BROKE_CHANNEL


SOME_CALL = "A call into your code"


def unreadable(label: str, error: Exception) -> LearnerError:
    """What the worker sent for ``label`` cannot be rebuilt in the harness (a value learner code
    made to look like something it is not); the codec's own sentence when it has one."""
    if isinstance(error, WireError):
        text = str(error).rstrip(".")
        reason = text[:1].lower() + text[1:] if text.startswith("A ") else text
    else:
        reason = "its shape or its data cannot be rebuilt"
    return LearnerError(
        kind="bad_return", feedback=messages.BAD_RETURN.format(call=label, reason=reason)
    )


def too_large(label: str, max_bytes: int) -> LearnerError:
    """The worker's answer for ``label`` was longer than the harness reads (a value that its
    own check let through, e.g. a value of many small parts)."""
    reason = messages.ANSWER_TOO_LONG.format(mb=f"{max_bytes / 2**20:g}")
    return LearnerError(
        kind="bad_return", feedback=messages.BAD_RETURN.format(call=label, reason=reason)
    )


def disk_over(label: str, disk_mb: int) -> LearnerError:
    """The worker's folder grew past the disk quota (checked by the harness where the worker
    has no size-capped root of its own)."""
    return LearnerError(kind="disk", feedback=messages.DISK_OVER.format(call=label, mb=disk_mb))


def garbled(label: str, error: Exception | None = None) -> LearnerError:
    """The worker answered with a frame that cannot be read (learner code wrote to the channel),
    or, ``error`` a FrameExpands, one that unpacks to more than its bytes can hold (learner code
    changed how the worker packs its answers)."""
    if isinstance(error, FrameExpands):
        sentence = messages.ANSWER_EXPANDS.format(call=label, nbytes=error.nbytes)
        return LearnerError(kind="crash", feedback=sentence)
    return LearnerError(kind="crash", feedback=messages.GARBLED.format(call=label))


def tampered(label: str, what: str) -> LearnerError:
    """The worker found, after ``label`` ran learner code, that a recorder was undone."""
    return LearnerError(kind="tampered", feedback=messages.TAMPERED.format(call=label, what=what))


def broke_with_evidence(label: str, how: str, evidence: str) -> LearnerError:
    """The worker broke the protocol (``how``) for a learner whose source reaches into the
    grader or the worker (``evidence``, from the static check): told as tampering."""
    feedback = messages.TAMPERED_EVIDENCE.format(call=label, how=how, evidence=evidence)
    return LearnerError(kind="tampered", feedback=feedback)


def expect_module(obj: Any, remote_object: type) -> None:
    """A plain value where a learner module (a ``remote_object``) should be, a part that is
    None, fails as the learner's mistake, not as the grader's AttributeError."""
    if not isinstance(obj, remote_object):
        raise not_a_module(obj)


def not_a_module(value: Any) -> LearnerError:
    """A plain value where the grader needs a module of the learner's (a part that is None, a
    constructor that gave 42): it has no parameters or methods to call."""
    feedback = messages.NOT_A_MODULE.format(reason=messages.a_type(value))
    return LearnerError(kind="bad_return", feedback=feedback)


def stale(type_name: str) -> LearnerError:
    """A RemoteObject of a worker that has since been replaced."""
    short = type_name.rsplit(".", 1)[-1]
    return LearnerError(kind="crash", feedback=messages.STALE_OBJECT.format(type_name=short))


def forbidden(records: list[Record], *, shown_dir: str, course_message: str) -> LearnerError:
    """Forbidden calls made in the called code's own file; the first one is named, its file
    (relative to the package folder) under ``shown_dir``, the package folder as the learner's
    repository names it ("assignments/t101")."""
    api, file, line = records[0]
    more = f" (and {len(records) - 1} more place(s))" if len(records) > 1 else ""
    shown = f"{shown_dir.rstrip('/')}/{file}"
    feedback = course_message.replace("{api}", api) + messages.FORBIDDEN_AT.format(
        file=shown, line=line, more=more
    )
    return LearnerError(
        kind="forbidden", feedback=feedback, location=f"{shown}:{line}", forbidden=tuple(records)
    )
