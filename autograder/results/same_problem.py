"""When two failure messages tell one problem, though their words differ.

* A visible test names the line of learner code an error came from ("... at
  assignments/t101/softmax.py:38 in softmax."); a hidden test never does, only the file ("... at
  assignments/t101/softmax.py."), nor where a time-out was stopped. ``hidden_form`` is a visible
  message as a hidden test would tell it.
* A call that ran out of time (or whose process ended) in earlier tests is not run again, and
  says so in other words ("... was not run again: it already ran past the time limit ...").
  ``stopped_call`` finds the call and why it stopped in both sentences, in a failure of the
  harness's own kind only ("timeout" or "crash", which no worker answer can name): a visible
  test's message holds the learner's exception text, which may tell of a stop in the same words.
* Tests of one check on other inputs fail with one sentence told of other numbers ("returned
  shape (4, 2, 5, 5); expected (2, 4, 5, 5)" and "... (4, 2, 3, 6); expected (2, 4, 3, 6)").
  ``alike_form`` is a message without its numbers, sizes and arguments, a learner line's
  number kept (but for the line a time-out was stopped at, a sample of its loop).

summary.md's "What to fix" (reports/what_to_fix.py) gives each problem one item by them.
"""

from __future__ import annotations

import re

from autograder.runtime.shared.messages import (
    CRASH_EXIT,
    CRASH_SIGNAL,
    NOT_RUN_AFTER_CRASHES,
    NOT_RUN_AFTER_HANGS,
    STOPPED_AT,
    TIMEOUT,
    TIMEOUT_WAITING,
)

#: A learner frame's place as a visible message names it (runtime/worker/describe.py):
#: " at FILE:LINE in FUNCTION"; a hidden message keeps " at FILE".
_LINE_LOCATION = re.compile(r"(?<= at )(?P<file>[^\s:]+\.py):\d+ in [^\s:;,.]+")
#: Where a time-out was stopped (runtime/harness/stopped_at.py): "... it was running FILE:LINE in
#: FUNCTION." in a visible test (the function only when it is a name), "... running FILE." in a
#: hidden one.
_STOPPED_LOCATION = re.compile(
    "(?<=" + re.escape(STOPPED_AT.split("{where}")[0]) + r")"
    r"(?P<file>[^\s:]+\.py):\d+(?: in [^\s:;,.]+)?(?=\.)"
)

#: A parenthesised group with no parentheses inside: arguments, shapes, tolerances.
_INNERMOST_GROUP = re.compile(r"\([^()]*\)")
#: A number standing alone (not inside a name such as t101), a learner line's number left out.
_NUMBER = re.compile(r"(?<![\w.:])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.]\w)")
#: How many entries differ: "3 of 20 entries differ(s)", or in a hidden test "all (some) of".
_HOW_MANY_DIFFER = re.compile(r"(?<!\w)(?:# of #|all of|some of) (?:\w+ )?entries differs?\b")

TIMED_OUT = "time-out"
ENDED = "crash"
#: The error kinds of a call the harness stopped, or did not run again for that
#: (runtime/harness/failures.py); a worker's answer names none of them (failures.WORKER_KINDS).
STOPPED_KINDS = frozenset(["timeout", "crash"])


def hidden_form(message: str) -> str:
    """``message`` with each learner line it names reduced to its file, as a hidden test tells
    it: "softmax(...) is not implemented yet: it raised NotImplementedError at
    assignments/t101/softmax.py:38 in softmax." -> "... at assignments/t101/softmax.py."."""
    return _STOPPED_LOCATION.sub(r"\g<file>", _LINE_LOCATION.sub(r"\g<file>", message))


def alike_form(message: str) -> str:
    """``message`` without what changes with a test's inputs: each parenthesised group and
    each number outside a learner line ("file.py:38") is left out, and how many entries differ
    is not said. Messages of one form tell one problem found on other inputs."""
    # where a time-out was stopped is a sample of its loop: two stops of one loop are one form
    form, before = _STOPPED_LOCATION.sub(r"\g<file>", message), None
    while form != before:
        before, form = form, _INNERMOST_GROUP.sub("", form)
    form = _NUMBER.sub("#", form)
    return _HOW_MANY_DIFFER.sub("entries differ", form)


def _call_pattern(template: str) -> re.Pattern[str]:
    """A template's start, up to the literal text after ``{call}``, as a pattern whose group
    ``call`` is the call (everything before it when the template starts with the call)."""
    before, after = template.split("{call}", 1)
    literal = after.split("{", 1)[0]
    # Without text before the call, a search would try the lazy group from every position
    # (quadratic in the message's length); the call then starts a line.
    start = re.escape(before) if before else "(?m)^"
    return re.compile(start + r"(?P<call>.+?)" + re.escape(literal))


#: (why the call stopped, whether it was the call not run again, the sentence's pattern).
#: The calls not run again first: their sentences tell of the earlier stop in words of its own.
_STOPPED = [
    (TIMED_OUT, True, _call_pattern(NOT_RUN_AFTER_HANGS)),
    (ENDED, True, _call_pattern(NOT_RUN_AFTER_CRASHES)),
    (TIMED_OUT, False, _call_pattern(TIMEOUT)),
    (TIMED_OUT, False, _call_pattern(TIMEOUT_WAITING)),
    (ENDED, False, _call_pattern(CRASH_SIGNAL)),
    (ENDED, False, _call_pattern(CRASH_EXIT)),
]


def stopped_call(message: str, kind: str) -> tuple[str, str, bool] | None:
    """(TIMED_OUT or ENDED, the call, whether the message is the call not run again) when
    ``message`` says a call ran out of time or its process ended, or was not run again for
    that, and ``kind`` (the test's error kind) is one the harness gives such a failure; else
    None. Words alone are the learner's: an exception's text can be any of these sentences."""
    if kind not in STOPPED_KINDS:
        return None
    for why, again, pattern in _STOPPED:
        found = pattern.search(message)
        if found is not None:
            return why, found["call"], again
    return None
