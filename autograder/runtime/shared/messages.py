"""Learner-facing sentences of the runtime, as named templates the tests reuse.

Placeholders: ``call`` is the learner-facing call (``softmax(...)``,
``MultiHeadAttention.forward(...)``), ``file`` a learner file as the learner's repository names
it, such as ``assignments/t101/softmax.py`` (so they can open it), ``where`` a suffix
" at assignments/t101/softmax.py:12 in softmax" (or ""), ``seconds`` and ``mb`` numbers.
"""

from __future__ import annotations

import builtins
import re
import signal
from collections.abc import Iterable
from typing import Any

MESSAGE_CAP = 2000

EXCEPTION = "{call} raised {exc_type}{where}: {message}"
EXCEPTION_NO_MESSAGE = "{call} raised {exc_type}{where}."
#: A hidden test never shows the exception's message: learner code could put the test's inputs
#: in it, by accident (a shape in an f-string) or to read the hidden inputs out.
EXCEPTION_HIDDEN = (
    "{call} raised {exc_type}{where}. A hidden test does not show an exception's message, since "
    "it may hold the test's inputs: call your code on inputs of your own (the shapes and options "
    "the assignment describes) to see it."
)
#: How a hidden test names an exception class that is not one of Python's own: by its nearest
#: built-in base, since a class's name is a string the learner's code can build at run time.
OWN_EXCEPTION_CLASS = "an exception of a class of your own derived from {base}"
#: The words that tell a component is not started; the class report counts them (only the
#: harness writes them: runtime/harness/worker_text.py).
NOT_IMPLEMENTED_WORDS = "is not implemented yet"
NOT_IMPLEMENTED = (
    "{call} " + NOT_IMPLEMENTED_WORDS + ": it raised NotImplementedError{where}. "
    "Replace the `raise NotImplementedError` with your implementation."
)
EXIT = (
    "{call} raised {exc_type}{where}; code being graded must return a value or raise an "
    "exception, never end the program (no sys.exit(), exit() or quit())."
)
MEMORY = (
    "{call} ran out of memory{where} (the limit is {mb} MB): look for an array or a list that "
    "is much larger than the inputs need."
)
DISK_FULL = (
    "{call} could not write a file{where}: your code may write {mb} MiB to disk in all, and "
    "that is used up. Write less (or to memory), and delete what you no longer need."
)
DISK_OVER = (
    "{call} left more than {mb} MiB of files in your folder, the most your code may write; it "
    "was stopped and its files were removed."
)
BAD_RETURN = "{call} returned a value the grader cannot read: {reason}."
ANSWER_TOO_LONG = "it is far larger than the {mb} MiB allowed for one value"
#: Why a value cannot be read, in a hidden test (the codec's own reason names its shapes).
HIDDEN_BAD_RETURN = (
    "its type, dtype or size cannot cross to the grader (a hidden test says no more)"
)
NOT_CONNECTED = (
    "{call} returned a tensor that does not depend on the module's parameters, so no gradient "
    "can flow back: keep the computation in torch (no .detach(), .item() or numpy) from the "
    "parameters to the output."
)
NO_TENSOR = "{call} returned no tensor, so its gradients cannot be checked."
NOT_AN_OBJECT = (
    "{call} gave {reason}, not an object of its class, so the grader cannot go on with it: a "
    "class's __new__ must return the instance it makes, and __init__ must return None."
)
NOT_A_MODULE = (
    "The grader expected a torch.nn.Module here, but your code gave {reason}: a class's __new__ "
    "must return the instance it makes, and a module's parts must be modules."
)

#: A test's output while its worker holds the course's stand-ins (harness/standin_custody.py).
#: Learner-facing: why nothing is shown, and where they can see what their code prints.
OUTPUT_WITHHELD = (
    "(Not shown: in this test your code ran together with the course's own versions of the "
    "parts it builds on, which are kept private, so nothing printed during it is shown. To see "
    "what your code prints, run the tests in your own repository (pytest, or autograder "
    "grade .): there they use your own parts and show everything your code prints.)\n"
)
SYNTAX_ERROR = (
    "{file} has a syntax error at line {line}: {message}. Fix it and run the tests again."
)
MISSING_MODULE = (
    "Could not find {file} in your submission; the assignment expects that file at that path "
    "in your repository."
)
REFUSED_MODULE = (
    "Could not use {file} from your submission: it is {reason}; submit the file itself at that "
    "path."
)
MISSING_NAME = (
    "{file} does not define {name}; the assignment expects a function or class named {name} "
    "there (check the spelling and that it is defined at the top level of the file)."
)
PACKAGE_BECAME_LINK = (
    "Your package folder {expected}, or a folder above it, became a symbolic link while it was "
    "being graded; the grader never follows a link in a submission, so it was not read."
)
TOO_LARGE = (
    "Your package folder {expected} holds more than {mb} MB of files, more than the grader "
    "accepts; remove data files, checkpoints and other large files from it."
)

TIMEOUT = (
    "{call} did not finish within {seconds} s of computing (the time limit per test, counting "
    "any process it started) — look for an infinite loop or a very slow step."
)
#: Added to a time-out's sentence when the worker's stack names a place in the learner's package
#: (harness/stopped_at.py): its line in a visible test, the file alone in a hidden one.
STOPPED_AT = "When it was stopped, it was running {where}."
NOT_RUN_AFTER_HANGS = (
    "{call} was not run again: it already ran past the time limit ({seconds} s) in {count} "
    "earlier tests — look for an infinite loop, a very slow step or a wait that never ends."
)
NOT_RUN_AFTER_CRASHES = (
    "{call} was not run again: the process running it ended before returning in {count} "
    "earlier tests (killed, or an exit)."
)
SUBMISSION_SPENT = (
    "{call} was not run: grading your submission has used the {seconds} s it may take in all "
    "(the time limit per submission), so its remaining tests fail."
)
SUBMISSION_CUT = (
    "{call} was stopped when grading your submission reached the {seconds} s it may take in "
    "all (the time limit per submission); its remaining tests fail without running."
)
TIMEOUT_WAITING = (
    "{call} did not finish within {seconds} s, most of them spent waiting rather than "
    "computing — look for a time.sleep, an input() or a lock that is never released."
)
IMPORT_TIMEOUT_WAITING = (
    "Importing {file} did not finish within {seconds} s, most of them spent waiting rather "
    "than computing — look for a time.sleep, an input() or a lock at the top level of the file."
)
MACHINE_BUSY = (
    "{call} could not be graded: the grading machine was too busy to give it a processor "
    "(in {seconds} s it waited {starved} s for one and computed for {computed} s). This is not "
    "your fault; your instructor has been told and can grade it again."
)
IMPORT_MACHINE_BUSY = (
    "Importing {file} could not be finished: the grading machine was too busy to give it a "
    "processor (in {seconds} s it waited {starved} s for one and computed for {computed} s). "
    "This is not your fault; your instructor has been told and can grade it again."
)
IMPORT_TIMEOUT = (
    "Importing {file} did not finish within {seconds} s (the time limit for importing a "
    "module) — look for an infinite loop or slow work at the top level of the file."
)
CRASH_SIGNAL = "The process running {call} was killed by {signal}{why}; no result came back."
CRASH_EXIT = (
    "The process running {call} ended with exit status {status} before returning — does your "
    "code call os._exit() or end the process some other way? Return a value instead."
)
WHY_SIGNAL = {
    "SIGSEGV": " (a segmentation fault: an invalid memory access, e.g. through ctypes or a "
    "crashing native extension)",
    "SIGKILL": " (possibly the memory limit of {mb} MB)",
    "SIGABRT": " (an abort in native code)",
    "SIGXFSZ": " (it wrote more than the file-size limit)",
}
GARBLED = (
    "The process running {call} sent back something that is not an answer — does your code "
    "write to file descriptors it did not open? It was stopped."
)
ANSWER_EXPANDS = (
    "The process running {call} sent back an answer that is larger than its {nbytes} bytes "
    "can hold when no part of it repeats another, and the grader's own packing never repeats "
    "one — does your code change how the grader sends answers (pickle, say)? It was stopped."
)
STALE_OBJECT = (
    "This {type_name} object was lost: it was created in an earlier grading process that has "
    "since been restarted after a crash or a time-out. Create it again in this test."
)
FORBIDDEN_AT = " It was called at {file}:{line}{more}."
TAMPERED = (
    "{call} failed because your code changed the grader's worker process ({what}); code being "
    "graded must leave the grader alone, so this part scores zero."
)
TAMPERED_EVIDENCE = (
    "{call} broke the grader's worker process ({how}), and your code reaches into it "
    "({evidence}); code being graded must leave the grader, its modules and its channel "
    "alone, so this part scores zero."
)
#: How the worker broke, for TAMPERED_EVIDENCE.
BROKE_INTERNAL = "it failed inside the grader's own code"
BROKE_GARBLED = "it sent back something that is not an answer"
BROKE_CHANNEL = "it stopped answering"
BROKE_SIGNAL = "it was killed by {signal}"
BROKE_EXIT = "it ended with exit status {status}"

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1b[@-Z\\-_]?"  # other two-byte escapes, or a lone ESC
    r"|[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]"  # other control characters (keeps \t and \n)
)
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def sanitize(text: str, cap: int = MESSAGE_CAP) -> str:
    """Strip terminal escape sequences and control characters, replace lone surrogates (which
    UTF-8 cannot hold) by U+FFFD; cap the length."""
    clean = _SURROGATES.sub("\ufffd", _ESCAPES.sub("", text.replace("\r\n", "\n")))
    if len(clean) > cap:
        clean = clean[:cap] + f" [... {len(clean) - cap} more characters]"
    return clean


def where(location: str) -> str:
    """The " at assignments/t101/x.py:3 in f" suffix, or "" when no learner frame was
    involved."""
    return f" at {location}" if location else ""


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def a_type(value: object) -> str:
    """'an int', 'a Tensor', 'None': what a value is, for a sentence."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1] in tuple('aeiouAEIOU') else 'a'} {name}"


def seconds(value: float) -> str:
    """2.0 -> "2", 2.5 -> "2.5"."""
    return f"{value:g}"


_BY_TEMPLATE = {
    "NO_TENSOR": NO_TENSOR,
    "NOT_CONNECTED": NOT_CONNECTED,
    "NOT_AN_OBJECT": NOT_AN_OBJECT,
}


def compose(error: dict[str, Any], call: str, *, hidden: bool = False) -> str:
    """The learner's sentence for a worker error raised by ``call`` ("softmax(...)" or, for an
    import, "Importing assignments/t101/softmax.py").

    ``hidden``: the call ran in a hidden test, so an exception's class is named by a built-in
    base (hidden_class_name), one raised while calling (kind "exception") is told without its
    message (EXCEPTION_HIDDEN), and a ``feedback`` the worker composed is not used: all are text
    learner code can make, and could carry the hidden inputs out. The harness passes checked
    fields alone for a hidden test (failures.hidden_sentence), the location as ``checked_file``:
    one of the course's module files, no line."""
    if error.get("feedback") and not hidden:  # the worker's own sentence, never a hidden test's
        return str(error["feedback"])
    kind = error["kind"]
    template = error.get("feedback_template")
    if template in ("NO_TENSOR", "NOT_CONNECTED", "NOT_AN_OBJECT"):
        return _BY_TEMPLATE[template].format(call=call, reason=error.get("reason", ""))
    fields = {
        "call": call,
        "exc_type": error.get("exc_type", ""),
        "message": error.get("message", ""),
        "where": where(error.get("location", "")),
        "mb": error.get("memory_mb", "?"),
        "reason": error.get("reason", ""),
    }
    if hidden:  # no message, no line: text the learner's code makes
        if fields["exc_type"]:
            fields["exc_type"] = hidden_class_name(fields["exc_type"], error.get("exc_mro", ()))
        fields["message"] = ""
        fields["where"] = where(str(error.get("checked_file", "")))  # the file alone, checked
        kind = "exception" if kind in ("syntax_error", "import_error") else kind
    if kind == "not_implemented":
        return NOT_IMPLEMENTED.format(**fields)
    if kind == "exit":
        return EXIT.format(**fields)
    if kind == "memory":
        return MEMORY.format(**fields)
    if kind == "disk":
        return DISK_FULL.format(**{**fields, "mb": error.get("disk_mb", "?")})
    if kind == "bad_return":
        return BAD_RETURN.format(**fields)
    if hidden and kind == "exception":
        return EXCEPTION_HIDDEN.format(**fields)
    if not fields["message"]:
        return EXCEPTION_NO_MESSAGE.format(**fields)
    return EXCEPTION.format(**fields)


def hidden_class_name(exc_type: str, exc_mro: Iterable[str]) -> str:
    """How a hidden test names an exception's class: its name when it is one of Python's own
    exceptions ("ValueError"), else the sentence OWN_EXCEPTION_CLASS with its nearest built-in
    base from ``exc_mro`` (a class's name is a string learner code can build at run time)."""
    names = [str(exc_type), *(str(n) for n in exc_mro)]
    builtin = [name for name in names if _is_builtin_exception(name)]
    if builtin and builtin[0] == names[0]:
        return names[0]
    return OWN_EXCEPTION_CLASS.format(base=builtin[0] if builtin else "Exception")


def _is_builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None) if name.isidentifier() else None
    return isinstance(value, type) and issubclass(value, BaseException)
