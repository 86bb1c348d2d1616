"""Where a call was stopped, from the stack its worker wrote: only a line of the package's own
files, never a place the stack merely claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.runtime.harness.stopped_at import STOPPED_AT, place, told
from autograder.runtime.shared.errors import LearnerError

DISPLAY = "assignments/toypkg"
FILES = frozenset({f"{DISPLAY}/loop.py"})


def stack(*frames: tuple[str, int, str], other_thread: bool = True) -> bytes:
    """A stack as faulthandler writes it for every thread, most recent call first."""
    lines = []
    if other_thread:
        lines += ["Thread 0x00007f0000000001 (most recent call first):"]
        lines += ['  File "/w/root/toypkg/loop.py", line 2 in helper', ""]
    lines += ["Current thread 0x00007f0000000002 (most recent call first):"]
    lines += [f'  File "{path}", line {line} in {function}' for path, line, function in frames]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture()
def package(tmp_path: Path) -> Path:
    folder = tmp_path / "toypkg"
    folder.mkdir()
    (folder / "loop.py").write_text("def spin(x):\n    while True:\n        x += 1\n")
    (folder / "deep").mkdir()
    (folder / "deep" / "inner.py").write_text("x = 1\n")
    return folder


def test_the_innermost_frame_of_the_package_in_the_current_thread_is_named(package):
    frames = [
        ("/usr/lib/python3.11/site-packages/torch/nn/functional.py", 900, "relu"),
        ("/tmp/autograder-1/root/toypkg/loop.py", 3, "spin"),
        ("/tmp/autograder-1/framework/autograder/runtime/worker/handler.py", 150, "op_call"),
    ]
    assert place(stack(*frames), "toypkg", package, DISPLAY) == (
        f"{DISPLAY}/loop.py",
        f"{DISPLAY}/loop.py:3 in spin",
    )
    deep = [("/r/toypkg/deep/inner.py", 1, "<module>")]
    assert (
        place(stack(*deep), "toypkg", package, DISPLAY)[1]
        == f"{DISPLAY}/deep/inner.py:1 in <module>"
    )


@pytest.mark.parametrize(
    "frame",
    [
        ("/r/toypkg/loop.py", 4, "spin"),  # the file has three lines
        ("/r/toypkg/loop.py", 0, "spin"),
        ("/r/toypkg/missing.py", 1, "f"),
        ("/r/toypkg/../secret.py", 1, "f"),
        ("/r/other/loop.py", 3, "spin"),
        ("/r/toypkg/loop.pyc", 3, "spin"),
    ],
    ids=["past_the_end", "line_0", "no_such_file", "dot_dot", "other_package", "not_python"],
)
def test_a_frame_no_file_of_the_package_has_names_nothing(package, frame):
    assert place(stack(frame), "toypkg", package, DISPLAY) == ("", "")


def test_a_file_reached_through_a_link_names_nothing(package, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("a\nb\nc\nd\ne\n")
    (package / "linked.py").symlink_to(outside)
    assert place(stack(("/r/toypkg/linked.py", 5, "f")), "toypkg", package, DISPLAY) == ("", "")


def test_no_current_thread_or_garbage_names_nothing(package):
    assert place(b"", "toypkg", package, DISPLAY) == ("", "")
    assert place(b"\xff\xfe garbage\n", "toypkg", package, DISPLAY) == ("", "")
    only_other = (
        b'Thread 0x1 (most recent call first):\n  File "/r/toypkg/loop.py", line 3 in spin\n'
    )
    assert place(only_other, "toypkg", package, DISPLAY) == ("", "")


def test_a_function_name_that_is_not_a_name_is_left_out(package):
    forged = stack(("/r/toypkg/loop.py", 3, "spin. Full marks were given"))
    assert place(forged, "toypkg", package, DISPLAY)[1] == f"{DISPLAY}/loop.py:3"


def test_told_names_the_line_in_a_visible_test_and_only_a_course_file_in_a_hidden_one(package):
    error = LearnerError("timeout", "spin(...) did not finish within 2 s.")
    frames = stack(("/r/toypkg/loop.py", 3, "spin"))
    visible = told(error, frames, package, "toypkg", DISPLAY, hidden=False, files=FILES)
    where = STOPPED_AT.format(where=f"{DISPLAY}/loop.py:3 in spin")
    assert (visible.kind, visible.feedback) == ("timeout", f"{error.feedback} {where}")
    hidden = told(error, frames, package, "toypkg", DISPLAY, hidden=True, files=FILES)
    assert hidden.feedback == f"{error.feedback} {STOPPED_AT.format(where=f'{DISPLAY}/loop.py')}"
    deep = stack(("/r/toypkg/deep/inner.py", 1, "<module>"))
    assert told(error, deep, package, "toypkg", DISPLAY, hidden=True, files=FILES) is error
    assert told(error, b"", package, "toypkg", DISPLAY, hidden=False, files=FILES) is error


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("/r/toypkg/loop.py", "9" * 5000),
        ("/r/toypkg/loop.py", "\u0663"),
        ("/r/toypkg/lo\x00op.py", "1"),
        ("/r/toypkg/\u00e9.py", "1"),
    ],
    ids=["too_many_digits", "not_ascii_digit", "nul_in_path", "not_ascii_path"],
)
def test_a_frame_faulthandler_never_writes_names_nothing(package, path, line):
    # 5,000 digits (int()) and a NUL byte (os.path.realpath) raised ValueError: the learner's
    # time-out became "The grader itself failed ... this is not your fault"
    (package / "\u00e9.py").write_text("x = 1\n")
    forged = "Current thread 0x1 (most recent call first):\n"
    forged += f'  File "{path}", line {line} in spin\n'
    assert place(forged.encode(), "toypkg", package, DISPLAY) == ("", "")
    error = LearnerError("timeout", "spin(...) did not finish within 2 s.")
    told_error = told(error, forged.encode(), package, "toypkg", DISPLAY, hidden=False, files=FILES)
    assert told_error is error
