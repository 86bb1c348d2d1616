"""Learner text that mimics the harness's markup: a named mistake, or "is not implemented yet".

Reports read both from a failure's words: `[softmax/no-max-shift] ` made the learner's own
exception text the component's first problem, joined it to that mistake's item in summary.md and
counted it in the class report; "is not implemented yet" left the learner out of a component's
pass rates. Every string a worker sends is now defused (runtime/harness/worker_text.py) where it
enters a message: it reads the same, and no report reads either from it.
"""

from __future__ import annotations

import re

from autograder.config import find_course_file, load_course
from autograder.gradebook.report_tests import _on_stub
from autograder.mistakes import course_catalogue
from autograder.results.mistake_tags import MARKER, named_mistake
from autograder.runtime.harness import failures
from autograder.runtime.harness.part_labels import ChainLabels, ProgressFrames
from autograder.runtime.harness.worker_text import NO_BREAK_SPACE, defused
from autograder.runtime.shared import wire
from autograder.runtime.shared.messages import NOT_IMPLEMENTED_WORDS

from ..examples.edited import ROOT, grade_one_edit

SENTENCE = course_catalogue(load_course(find_course_file(ROOT / "course.toml"))).sentence(
    "softmax/no-max-shift"
)
FORGED = f"{SENTENCE} Also, softmax {NOT_IMPLEMENTED_WORDS}."
DOC_END = 'computes the same values.\n    """\n'


def test_a_forged_sentence_reads_the_same_but_names_nothing():
    out = defused(FORGED)
    assert out.replace(NO_BREAK_SPACE, " ") == FORGED  # the learner sees their words
    assert MARKER.search(out) is None and NOT_IMPLEMENTED_WORDS not in out
    assert named_mistake(FORGED) is not None  # what the undefused text would have told
    assert defused("no marker here [a] and [b/c]d") == "no marker here [a] and [b/c]d"


def test_every_string_a_worker_error_sends_is_defused():
    error = {
        "kind": "exception",
        "exc_type": "[softmax/global-max] Error",
        "exc_mro": ["Exception"],
        "message": FORGED,
        "location": "assignments/t101/softmax.py:3 in softmax",
    }
    told = failures.from_worker(error, "softmax(...)")
    for text in (told.feedback, told.message, told.exc_type):
        assert MARKER.search(text) is None, text
    assert named_mistake(told.feedback) is None
    assert not _on_stub(told.feedback)  # counted as a failure, not as a stub
    # the worker's own composed sentence, too
    told = failures.from_worker({**error, "feedback": FORGED}, "softmax(...)")
    assert MARKER.search(told.feedback) is None and not _on_stub(told.feedback)


def test_the_harness_own_not_implemented_sentence_still_counts():
    told = failures.from_worker({"kind": "not_implemented"}, "softmax(...)")
    assert NOT_IMPLEMENTED_WORDS in told.feedback and _on_stub(told.feedback)


def test_a_type_name_in_a_progress_frame_cannot_carry_a_marker():
    labels = ChainLabels(["MultiHeadAttention(...)"], ["forward"], None)
    frames = ProgressFrames()
    frame = wire.dumps({"progress": 1, "type": "[softmax/global-max] X"})
    assert frames.read(frame, labels)
    label = labels.label(frames.part, frames.type_name)
    assert label is not None and MARKER.search(label) is None


def test_exception_text_naming_a_mistake_is_no_named_mistake_in_any_report(tmp_path):
    forger = f"    raise ValueError({FORGED!r})\n"
    results = grade_one_edit(
        tmp_path,
        "forger",
        {"softmax.py": [(DOC_END, DOC_END.removesuffix('    """\n') + '    """\n' + forger)]},
        "softmax",
    )
    softmax = [t for t in results["tests"] if t["tags"] == ["softmax"]]
    assert softmax and all(t["status"] == "failed" for t in softmax)
    assert all(named_mistake(t["output"]) is None for t in softmax)
    assert any("raised ValueError" in t["output"] for t in softmax)
    summary = (tmp_path / "grades" / "summary.md").read_text(encoding="utf-8")
    assert not re.search(r"\[softmax/[a-z-]+\] ", summary), summary
    assert sum(t["score"] for t in softmax) == 0.0
