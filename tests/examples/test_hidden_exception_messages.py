"""A hidden test never shows what the learner's exception says, end to end through
`autograder grade`: learner code could put the hidden inputs into an exception's message (by
accident, a shape in an f-string, or on purpose) or into the name of an exception class it
builds at run time, and read them back from results.json.

The submission is the reference with two components that raise on every call: softmax raises a
ValueError whose message carries its input's shape and first values, and the feed-forward
network raises an exception of a class made at run time whose name carries its input's shape.
Visible tests still show the message and the class (the learner's own inputs are public there).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.runtime.shared import messages

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "solutions" / "t101"
MARK = "EXFIL"

SOFTMAX = f'''
def softmax(x, axis=-1):
    raise ValueError("{MARK} " + repr(tuple(x.shape)) + " " + repr(x.ravel()[:3].tolist()))
'''

FEED_FORWARD_RAISES = f'''
    def forward(self, x):
        name = "{MARK}_" + "_".join(str(n) for n in x.shape)
        raise type(name, (ArithmeticError,), {{}})("{MARK} message")

    def _unused_forward'''


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("hidden_exceptions")
    package = base / "leaky" / "assignments" / "t101"
    shutil.copytree(REFERENCE, package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "softmax.py").write_text(SOFTMAX, encoding="utf-8")
    feed_forward = package / "feed_forward.py"
    source = feed_forward.read_text(encoding="utf-8")
    assert source.count("    def forward(") == 1
    feed_forward.write_text(
        source.replace("    def forward", FEED_FORWARD_RAISES, 1), encoding="utf-8"
    )
    out = base / "grades"
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(base / "leaky"), "--out", str(out)]
        + ["--course", str(ROOT / "course.toml"), "--quiet"]
        + ["--component", "softmax", "--component", "feed_forward"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 1, completed.stderr  # graded, some tests failed
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def raised(results: dict, component: str, visibility: str) -> list[str]:
    """The outputs of the component's tests of one visibility that report a raised exception."""
    outputs = [
        t["output"]
        for t in results["tests"]
        if t["tags"] == [component]
        and (t["visibility"] == "visible") == (visibility == "visible")
        and " raised " in t["output"]
    ]
    assert outputs, f"no {visibility} test of {component} reported the exception"
    return outputs


def test_hidden_tests_leave_out_the_message_visible_tests_keep_it(results):
    for output in raised(results, "softmax", "hidden"):
        assert MARK not in output
        assert "A hidden test does not show an exception's message" in output
        # the line it was raised at is text the worker sends, which learner code can rewrite;
        # the file is kept only as one of the course's module files
        assert "raised ValueError at assignments/t101/softmax.py. A hidden test" in output
    visible = raised(results, "softmax", "visible")
    assert all(MARK in output for output in visible)
    assert all(
        "raised ValueError at assignments/t101/softmax.py:3 in softmax" in o for o in visible
    )


def test_hidden_tests_name_a_class_made_at_run_time_by_its_builtin_base(results):
    own_class = messages.OWN_EXCEPTION_CLASS.format(base="ArithmeticError")
    for output in raised(results, "feed_forward", "hidden"):
        assert MARK not in output
        assert f"raised {own_class} at assignments/t101/feed_forward.py. A hidden test" in output
    assert all(f"{MARK}_" in output for output in raised(results, "feed_forward", "visible"))
