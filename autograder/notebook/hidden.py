"""Keeping the notebook's hidden tests out of what a learner gets back (trusted side).

nbgrader runs the hidden tests in the learner's own kernel (docs/instructor/notebook.md), so
their code passes through learner-controlled territory. What comes back to the learner is the
autograded notebook (notebook.graded.ipynb) and the error texts quoted in results.json. Here:

* ``without_hidden_tests``: the hidden tests' lines in the test cells (between the nbgrader
  markers) are replaced by one comment;
* ``scrub``: any output or error line that contains a line of the hidden tests (as written in
  the instructor's source notebook, MIN_LINE characters or more once stripped) is replaced by
  a note. This removes the quotes an IPython traceback makes of the failing hidden line, and a
  verbatim print of them; it cannot undo a learner's deliberate re-encoding
  (docs/instructor/notebook.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# nbgrader's ClearHiddenTests delimiters, matched as it matches them: anywhere in a line (H43:
# "# BEGIN HIDDEN TESTS" is a marker to nbgrader, which hid the tests from the release, but was
# not one here, so the autograded notebook handed back showed them verbatim).
HIDDEN_BEGIN, HIDDEN_END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
HIDDEN_NOTE = "# (hidden tests ran here; they are not shown)"
SCRUBBED = "(a line of the hidden tests: not shown)"
#: Shorter stripped lines (`)`, `pass`, `else:`) say nothing and occur everywhere.
MIN_LINE = 8
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_OUTPUT_TEXT_KEYS = ("text", "evalue")


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def hidden_lines(document: dict[str, Any]) -> frozenset[str]:
    """The stripped lines (MIN_LINE characters or more) between the hidden-test markers of a
    notebook's cells (the instructor's source notebook)."""
    found: set[str] = set()
    for cell in document.get("cells", []):
        inside = False
        for line in _text(cell.get("source", "")).splitlines():
            stripped = line.strip()
            if HIDDEN_BEGIN in line:
                inside = True
            elif HIDDEN_END in line:
                inside = False
            elif inside and len(stripped) >= MIN_LINE:
                found.add(stripped)
    return frozenset(found)


def scrub(text: str, hidden: Iterable[str]) -> str:
    """text with every line that quotes a hidden line replaced by SCRUBBED."""
    hidden = tuple(hidden)
    if not hidden or not text:
        return text
    lines = text.split("\n")
    for index, line in enumerate(lines):
        plain = _ANSI.sub("", line)
        if any(h in plain for h in hidden):
            lines[index] = SCRUBBED
    return "\n".join(lines)


def without_hidden_tests(document: dict[str, Any], hidden: Iterable[str] = ()) -> dict[str, Any]:
    """An autograded notebook for the learner's eyes: nbgrader restored the hidden tests into
    the test cells to run them; their lines (markers included) are replaced by one comment, and
    every output line quoting a hidden line is scrubbed (``scrub``)."""
    hidden = tuple(hidden)
    for cell in document.get("cells", []):
        text = _text(cell.get("source", ""))
        if HIDDEN_BEGIN in text:
            cell["source"] = _strip_hidden(text)
        for output in cell.get("outputs", []) if isinstance(cell.get("outputs"), list) else []:
            if isinstance(output, dict):
                _scrub_output(output, hidden)
    return document


def _scrub_output(output: dict[str, Any], hidden: tuple[str, ...]) -> None:
    for key in _OUTPUT_TEXT_KEYS:
        if key in output:
            output[key] = scrub(_text(output[key]), hidden)
    if isinstance(output.get("traceback"), list):
        output["traceback"] = [scrub(str(entry), hidden) for entry in output["traceback"]]
    data = output.get("data")
    if isinstance(data, dict):
        # Every type, not only text/*: image/svg+xml, application/javascript and the like are
        # text too, application/json holds strings, and learner code can display any of them.
        for mime, value in data.items():
            if isinstance(value, str) or (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                data[mime] = scrub(_text(value), hidden)
            else:
                data[mime] = _scrub_strings(value, hidden)


def _scrub_strings(value: Any, hidden: tuple[str, ...]) -> Any:
    """value (JSON data) with every string in it scrubbed."""
    if isinstance(value, str):
        return scrub(value, hidden)
    if isinstance(value, list):
        return [_scrub_strings(v, hidden) for v in value]
    if isinstance(value, dict):
        return {k: _scrub_strings(v, hidden) for k, v in value.items()}
    return value


def _strip_hidden(text: str) -> str:
    kept, hidden = [], False
    for line in text.splitlines():
        if HIDDEN_BEGIN in line:
            hidden = True
            kept.append(HIDDEN_NOTE)
        elif HIDDEN_END in line:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)
