"""The sentence a failing notebook test cell gets (trusted side).

- First the test's own outcome: its error as one sentence (error_sentence: an instructor's
  assertion message first, numpy's tolerance report after it, never an empty "AssertionError:"),
  where the error was raised when that is another cell (a stub's NotImplementedError is blamed
  on the stub's cell), or that the cell timed out, ended the kernel, or did not run.
- Then the earlier cause the evidence shows, if any: cells that timed out before it; a cell that
  ran out of memory; for a name that is not defined, the earlier failed cell that defines it.
- Cells are named as the learner sees them in Jupyter (cell_errors.CellError.label); a test cell
  by its grade_id. The first sentence is what the class report and the terminal quote.

Design: docs/internals/notebook-mistakes.md#the-sentence-a-failing-cell-gets.
"""

from __future__ import annotations

from autograder.notebook.cell_errors import (
    KERNEL_DIED,
    MAX_ERROR_CHARS,
    NOT_RUN,
    CellError,
    binds,
)

CELL_TIMED_OUT = (
    "This test did not finish within {seconds:g} seconds; the cell was interrupted "
    "(an infinite loop?)."
)
CELL_FAILED = "Test cell {grade_id} failed: {error}"
CELL_FAILED_NO_ERROR = "Test cell {grade_id} did not pass."
RAISED_IN = "It was raised in {cell}, line {line}{function}."
KERNEL_WHY = "it crashed, or needed more than the notebook's {memory_mb:g} MB of memory"
CELL_ENDED_KERNEL = (
    "Test cell {grade_id} ended the Python kernel ({why}), so the cells after it did not run."
)
NOT_RUN_AFTER = (
    "Test cell {grade_id} did not run: an earlier cell, {cell}, ended the Python kernel ({why}), "
    "so the cells after it did not run."
)
EARLIER_TIMEOUT = (
    "An earlier cell, {cells}, did not finish within {seconds:g} seconds and was interrupted, "
    "so what it should define may be missing."
)
EARLIER_MEMORY = (
    "An earlier cell, {cell}, ran out of memory first (MemoryError), and what it holds may "
    "still fill the memory."
)
EARLIER_ERROR = (
    "An earlier cell, {cell}, which defines {name}, failed first; fix that one first: {error}"
)
#: The next link when that earlier cell failed for want of a name too (at most MAX_HOPS).
NEEDS_FROM = "That cell needs {name}, which {cell} defines and which failed first: {error}"
MAX_HOPS = 3
NO_MESSAGE = "{ename}, with no message"
#: How numpy.testing starts an assertion report, and its detail lines (kept after the message).
NUMPY_HEADERS = ("Not equal to tolerance", "Arrays are not", "Items are not equal")
NUMPY_DETAILS = ("Mismatched elements", "Max absolute difference", "Max relative difference")
NUMPY_VALUES = ("x:", "y:", "ACTUAL:", "DESIRED:")


def error_sentence(error: CellError) -> str:
    """A cell's error as one line: "Name: message", an instructor's message before numpy's
    tolerance report, the arrays themselves left out (they are in the graded notebook)."""
    lines = [line.strip() for line in error.evalue.splitlines() if line.strip()]
    if not lines:
        return NO_MESSAGE.format(ename=error.ename)
    if lines[0].startswith(NUMPY_HEADERS):
        header, rest = lines[0], lines[1:]
        values = next((i for i, line in enumerate(rest) if line.startswith(NUMPY_VALUES)), None)
        rest = rest[:values] if values is not None else rest
        details = [header, *(line for line in rest if line.startswith(NUMPY_DETAILS))]
        message = [line for line in rest if not line.startswith(NUMPY_DETAILS)]
        text = f"{_full_stop(' '.join(message))} ({'; '.join(details)})" if message else details[0]
    else:
        text = " ".join(lines)
    return f"{error.ename}: {text}"[:MAX_ERROR_CHARS]


def cell_message(
    grade_id: str,
    errors: list[CellError],
    *,
    cell_timeout: float,
    memory_mb: float,
    graded: set[str],
    sources: dict[int, str],
) -> str:
    """The failing test cell `grade_id`'s message, from the notebook's `errors` (in order).
    ``graded``: the test cells' grade_ids; ``sources``: each failed cell's source, by index."""
    own = next((e for e in errors if e.grade_id == grade_id), None)
    if own is None:
        return CELL_FAILED_NO_ERROR.format(grade_id=grade_id)
    if own.timed_out:
        return CELL_TIMED_OUT.format(seconds=cell_timeout)
    why = KERNEL_WHY.format(memory_mb=memory_mb)
    died = next((e for e in errors if e.ename == KERNEL_DIED), None)
    before = own.index if died is None or own.ename != NOT_RUN else died.index
    earlier = [e for e in errors if e.index < before]
    if own.ename == NOT_RUN and died is not None:
        message = NOT_RUN_AFTER.format(grade_id=grade_id, cell=died.label, why=why)
    elif own.ename == KERNEL_DIED:
        message = CELL_ENDED_KERNEL.format(grade_id=grade_id, why=why)
    else:
        message = _full_stop(CELL_FAILED.format(grade_id=grade_id, error=error_sentence(own)))
        if own.raised_in is not None:
            message += " " + _raised_in(own)
    cause = _earlier_cause(own, earlier, cell_timeout, graded, sources)
    return f"{message} {cause}" if cause else message


def _raised_in(own: CellError) -> str:
    label, line, function = own.raised_in or ("", 0, "")
    return RAISED_IN.format(cell=label, line=line, function=f", in {function}" if function else "")


def _earlier_cause(
    own: CellError,
    earlier: list[CellError],
    cell_timeout: float,
    graded: set[str],
    sources: dict[int, str],
) -> str:
    """The sentence naming what failed before and may explain `own`, or "" when nothing does."""
    timed_out = [e.label for e in earlier if e.timed_out]
    if timed_out:
        return EARLIER_TIMEOUT.format(cells=" and ".join(timed_out), seconds=cell_timeout)
    if own.ename in (KERNEL_DIED, NOT_RUN, "MemoryError"):
        memory = next((e for e in earlier if e.ename == "MemoryError"), None)
        return EARLIER_MEMORY.format(cell=memory.label) if memory else ""
    sentences, template, failed = [], EARLIER_ERROR, own
    for _ in range(MAX_HOPS):  # a cell that failed for want of a name an earlier one defines
        name = failed.undefined_name
        cause = _defining(name, [e for e in earlier if e.index < failed.index], graded, sources)
        if name is None or cause is None:
            break
        error = error_sentence(cause)
        sentences.append(_full_stop(template.format(cell=cause.label, name=name, error=error)))
        template, failed = NEEDS_FROM, cause
    return " ".join(sentences)


def _defining(
    name: str | None, earlier: list[CellError], graded: set[str], sources: dict[int, str]
) -> CellError | None:
    """The last earlier failed cell (no test cell) that defines `name`, if any."""
    if name is None:
        return None
    found = [
        e for e in earlier if e.grade_id not in graded and binds(sources.get(e.index, ""), name)
    ]
    return found[-1] if found else None


def _full_stop(sentence: str) -> str:
    """The sentence ending with a full stop, unless it already ends a sentence: an error's
    own text ("name 'x' is not defined") is quoted as it came."""
    return sentence if sentence.endswith((".", "!", "?")) else f"{sentence}."
