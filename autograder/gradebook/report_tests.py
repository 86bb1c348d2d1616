"""What the class report reads from each learner's results.json: every test's outcome.

* ``failure_key`` groups failure messages: one naming a catalogued mistake
  (`[attention/no-scale]`) by that mistake, any other by its first sentence with numbers and
  shapes replaced by `…` (no value of a hidden test is shown).
* "is not implemented yet", anywhere in a message, is counted per component, not as a message;
  a learner whose every test of a component says so is left out of that component's pass
  rates, the same rule for every component.

Design: docs/internals/gradebook.md#failure-messages-grouped.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from autograder.gradebook.report_model import (
    GRADED_WHEN,
    NO_MESSAGE,
    NOT_IMPLEMENTED_MARK,
    TESTS_RUN,
)
from autograder.gradebook.store import LearnerRecord, learner_dir
from autograder.learner_text import PLACE, SENTENCE_END, clean, first_sentence
from autograder.reports import results_json
from autograder.results import capitalised
from autograder.results.mistake_tags import named_mistake_in_full, named_mistakes
from autograder.runtime.shared.messages import NOT_RUN_AFTER_HANGS, TIMEOUT

FailureKey = tuple[str, str, str]  # (component, mistake id, message)
# A shape such as (2, 3, 4) or (5,), then any other number (not one inside a name: W_1, t101).
_SHAPE = re.compile(r"\(\s*-?\d+\s*(?:,\s*-?\d+\s*)*,?\s*\)")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w)")
# A time limit, which differs by course and run: "within 10 s", "the 120 s it may take".
_WITHIN = re.compile(r"\bwithin \d+(?:\.\d+)? s(?:econds)?\b")
_THE_SECONDS = re.compile(r"\bthe \d+(?:\.\d+)? s\b")


@dataclass
class Tally:
    """The class's test outcomes: per test, the learners who passed it and those who ran it
    having implemented its component; per failure key, the learners (counted once each); per
    component, the learners with a not-implemented failure; how the tests were run."""

    passed: Counter[str] = field(default_factory=Counter)
    ran: Counter[str] = field(default_factory=Counter)
    failures: Counter[FailureKey] = field(default_factory=Counter)
    who: dict[FailureKey, list[str]] = field(default_factory=dict)
    stubs: dict[str, list[str]] = field(default_factory=dict)
    how: set[tuple[object, object, object]] = field(default_factory=set)

    def add(self, learner: str, document: dict) -> None:
        """One learner's results.json."""
        self.how.add(_how(document))
        tests = _tests(document)
        failing = [t for t in tests if t.get("status") != "passed"]
        stubbed = [t for t in failing if on_stub(t)]
        untouched = _untouched(tests, {id(t) for t in stubbed})
        for test in tests:
            if _component(test) in untouched:
                continue
            self.ran[test["name"]] += 1
            self.passed[test["name"]] += test.get("status") == "passed"
        seen = {failure_key(t) for t in failing if not on_stub(t)}
        self.failures.update(seen)  # count learners, not tests
        for key in seen:
            self.who.setdefault(key, []).append(learner)
        for component in sorted({_component(t) for t in stubbed}):
            self.stubs.setdefault(component, []).append(learner)

    def pass_rates(self) -> list[tuple[str, int, int]]:
        """(test, passed, learners who implemented it), the most failed first: that is where
        the class needs help."""
        return sorted(
            ((name, self.passed[name], self.ran[name]) for name in self.ran),
            key=lambda row: (row[1] / row[2] if row[2] else 1.0, row[0]),
        )


def tally(out: Path, graded: list[LearnerRecord]) -> Tally:
    """The Tally of the graded learners' results.json files in out."""
    counted = Tally()
    for record in graded:
        counted.add(record.learner, read_results(out, record.learner))
    return counted


def _component(test: dict) -> str:
    return str((test.get("tags") or [""])[0])


def _untouched(tests: list[dict], stubbed: set[int]) -> set[str]:
    """The components whose every test failed as not implemented yet (``stubbed``: those
    tests' ids)."""
    components = {_component(t) for t in tests}
    return {c for c in components if all(id(t) in stubbed for t in tests if _component(t) == c)}


def on_stub(test: dict) -> bool:
    """Whether a failing test in results.json failed on a stub: its message says, anywhere,
    that code is not implemented yet (a grader may say first what it could not do for it:
    "EncoderLayer(12, 3, 20) could not be constructed, ... EncoderLayer(...) is not implemented
    yet: ..."), and names no catalogued mistake."""
    return _on_stub(str(test.get("output", "")))


@functools.lru_cache(maxsize=4096)
def _on_stub(output: str) -> bool:
    text = clean(output)
    return NOT_IMPLEMENTED_MARK in text and named_mistake_in_full(text) is None


def failure_key(test: dict) -> FailureKey:
    """(component, mistake id, message) of a failing test in results.json. A message that
    names a catalogued mistake is that mistake (its component, its id, its explanation); any
    other is its first sentence with numbers and shapes replaced by `…`."""
    return _failure_key(str(test.get("output", "")), _component(test))


@functools.lru_cache(maxsize=4096)
def _failure_key(output: str, component: str) -> FailureKey:
    """failure_key of one (message, component): a class repeats the same few hundred, and
    normalising each again was most of the report's time for a class of a thousand."""
    text = clean(output)
    found = named_mistakes(text)
    if found:
        explanations = []
        for mistake, sentence in found:
            explanation = sentence.removeprefix(f"[{mistake}]").strip()
            # the learner's own place ("Look at .../attention.py:23, ...") is not the class's
            kept = [s for s in SENTENCE_END.split(explanation) if not PLACE.search(s)]
            explanations.append(as_sentence(" ".join(kept)))
        # several a failure could not tell apart are one row: counting each would blame them all
        mistakes = " or ".join(mistake for mistake, _ in found)
        shown = explanations[0] if len(found) == 1 else " Or: ".join(explanations)
        return found[0][0].split("/", 1)[0], mistakes, shown
    message = normalise(first_sentence(_hang(text)))
    return component, "", as_sentence(message) if message else NO_MESSAGE


#: The sentence of a call not run again after it hung in earlier tests (runtime/shared/messages.py).
_NOT_RUN_AGAIN = re.compile(
    re.escape(NOT_RUN_AFTER_HANGS.split("{call}")[1].split("{seconds}")[0])
    + r"(?P<seconds>.*?)"
    + re.escape(NOT_RUN_AFTER_HANGS.split("{seconds}")[1].split("{count}")[0])
)


def _hang(text: str) -> str:
    """A call not run again because it hung before, as the time-out it is: one row for one
    infinite loop (H32 saw two, 'did not finish' and 'was not run again', for each learner)."""
    found = _NOT_RUN_AGAIN.search(text)
    if found is None:
        return text
    return TIMEOUT.format(call=text[: found.start()], seconds=found["seconds"])


def normalise(message: str) -> str:
    """The message with its shapes and numbers replaced by `…`: one row for one failure seen
    at several sizes, and no input or expected value of a hidden test. A time limit is said in
    words ("did not finish within the allowed seconds of computing"), not as "within … s"."""
    message = _THE_SECONDS.sub("the seconds", _WITHIN.sub("within the allowed seconds", message))
    return _NUMBER.sub("…", _SHAPE.sub("(…)", message))


def as_sentence(message: str) -> str:
    """The message as a sentence: it starts with a capital letter (a leading lowercase word is
    capitalised, "the gradient of" -> "The gradient of"; a leading call, which must keep its
    spelling, gets "The call " in front: "The call softmax(...) is not implemented yet") and
    ends with a full stop (or ! or ?)."""
    if not message:
        return message
    if not message.endswith((".", "!", "?")):
        message += "."
    return capitalised(message)  # as results.json already has it since grading does this too


def read_results(out: Path, learner: str) -> dict:
    """The learner's results.json ({} when it is missing or unreadable)."""
    try:
        return results_json.read_results_json(learner_dir(out, learner) / results_json.FILE_NAME)
    except results_json.ResultsFileError:
        return {}


def _tests(document: dict) -> list[dict]:
    tests = document.get("tests")
    return (
        [t for t in tests if isinstance(t, dict) and "name" in t] if isinstance(tests, list) else []
    )


def _how(document: dict) -> tuple[object, object, object]:
    """(seed, whether hidden tests ran, seconds per test) as results.json's extra_data
    records them."""
    extra = document.get("extra_data")
    extra = extra if isinstance(extra, dict) else {}
    return extra.get("seed"), extra.get("hidden_included"), extra.get("test_timeout_s")


def graded_when(graded: list[LearnerRecord], how: set[tuple[object, object, object]]) -> str:
    """GRADED_WHEN for these records (when and how they were graded), "" without a time."""
    times = sorted(t for t in (_instant(r.graded_at) for r in graded) if t is not None)
    if not times:
        return ""
    first, last = (t.strftime("%Y-%m-%d %H:%M") for t in (times[0], times[-1]))
    when = f"on {first}" if first == last else f"from {first} to {last}"
    seeds = sorted({str(seed) for seed, _, _ in how if seed is not None})
    hidden = {included for _, included, _ in how if included is not None}
    limits = sorted({f"{s:g}" for _, _, s in how if isinstance(s, int | float)}, key=float)
    parts = [f"seed {' and '.join(seeds)}"] if seeds else []
    parts += [TESTS_RUN[included] for included in sorted(hidden, reverse=True)]
    parts += [f"{' and '.join(limits)} s of learner code per test"] if limits else []
    return GRADED_WHEN.format(when=when, how=f" ({', '.join(parts)})" if parts else "")


def _instant(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else None
