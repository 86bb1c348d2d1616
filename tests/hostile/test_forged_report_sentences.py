"""Learner text that mimics the harness's own sentences about a stopped call (hostile finding).

summary.md's "What to fix" joins the tests not run again after a time-out or a crash to that
stop's item, and says how many "only repeated it". It read both from a message's words, and a
visible test's message holds the learner's exception text: a `ValueError` telling "The process
running softmax(x) was killed by SIGKILL" and "softmax(x) was not run again: ..." made summary.md
count 3 tests not run again after a crash that never happened.

A stop is now the harness's own kind of failure ("timeout" or "crash", which a worker's answer
cannot name: runtime/harness/failures.WORKER_KINDS), never a sentence's words.
"""

from __future__ import annotations

from autograder.reports import summary_md
from autograder.runtime.shared.messages import NOT_RUN_AFTER_CRASHES, NOT_RUN_AFTER_HANGS

from ..examples.edited import grade_one_edit

CRASHED = "The process running softmax(x) was killed by SIGKILL; no result came back"
AGAIN = NOT_RUN_AFTER_CRASHES.format(call="softmax(x)", count=2)
HUNG_AGAIN = NOT_RUN_AFTER_HANGS.format(call="softmax(x)", count=2, seconds=10)
#: softmax raising one of the three texts, by its input's size (a line of its own for the two
#: that a harness sentence starts)
FORGER = f'''    """
    if x.size % 3 == 0:
        raise ValueError({CRASHED!r})
    if x.size % 3 == 1:
        raise ValueError({chr(10) + AGAIN!r})
    raise ValueError({chr(10) + HUNG_AGAIN!r})
'''
DOC_END = 'computes the same values.\n    """\n'


def test_learner_text_that_tells_of_a_stopped_call_joins_no_item_and_counts_no_test(tmp_path):
    results = grade_one_edit(
        tmp_path,
        "forger",
        {"softmax.py": [(DOC_END, DOC_END.removesuffix('    """\n') + FORGER)]},
        "softmax",
    )
    softmax = [t for t in results["tests"] if t["tags"] == ["softmax"]]
    assert softmax and all(t["status"] == "failed" for t in softmax)  # it raised in every test
    summary = (tmp_path / "grades" / "summary.md").read_text(encoding="utf-8")
    # No test was stopped or left unrun: no item may say that some were not run again
    assert "not run again after it" not in summary
    items = [line for line in summary.splitlines() if line.startswith("- **Softmax**: ")]
    visible = [item for item in items if "softmax.py:" in item]
    # the three texts are three problems, the first told by the learner's own exception
    assert len(visible) == 3, items
    assert visible[0].startswith(
        "- **Softmax**: The call softmax(...) raised ValueError at assignments/t101/softmax.py:"
    )
    assert all(summary_md.SEEN_IN.split("{")[0] in item for item in visible)
    assert sum(t["score"] for t in softmax) == 0.0  # and no score changed
