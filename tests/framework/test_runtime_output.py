"""The learner's output: read and cleared through the harness's own descriptor of the capture
file, once per request, and only when the worker wrote something."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from autograder.runtime import LearnerSession, Limits
from autograder.runtime.harness import isolation

CODE = """\
import os


def say(text):
    print(text)
    return len(text)


def quiet():
    return 7


def where():
    import warnings

    warnings.warn("overflow encountered in exp", RuntimeWarning)
    print(os.path.abspath(__file__))
    return True


def library_warning():
    import warnings

    import numpy as np

    warnings.warn_explicit("from inside a library", RuntimeWarning, np.__file__, 7)
    return True


def swap(target):
    print("before")
    log = os.path.join(os.getcwd(), "..", "output.log")
    try:
        os.remove(log)
    except OSError as exc:  # under namespaces its folder is read-only to the worker
        print("after")
        return type(exc).__name__
    os.symlink(target, log)
    print("after")
    return True
"""


def new_session(tmp_path: Path, *, output_kb: int = 1, **options) -> LearnerSession:
    """A session on a package `toypkg` holding `talk.py` (CODE)."""
    package_dir = tmp_path / "submission" / "toypkg"
    package_dir.mkdir(parents=True)
    (package_dir / "__init__.py").write_text("")
    (package_dir / "talk.py").write_text(textwrap.dedent(CODE))
    limits = Limits(test_timeout=30, import_timeout=30, output_kb=output_kb)
    return LearnerSession(package_dir, package="toypkg", limits=limits, **options)


@pytest.fixture
def session(tmp_path: Path):
    made = new_session(tmp_path)
    try:
        yield made
    finally:
        made.close()


def test_each_call_gets_what_it_printed_and_a_quiet_call_nothing(session):
    talk = session.module("talk")
    assert talk.say.call("hello").output == "hello\n"
    assert talk.quiet.call().output == ""
    assert talk.say.call("again").output == "again\n"
    long = talk.say.call("x" * 1500).output
    assert long.startswith("x" * 1024)
    assert long.endswith("[... 477 more bytes of output not shown]\n")


def test_a_capture_file_swapped_for_a_link_leads_the_harness_nowhere(session, tmp_path):
    secret = tmp_path / "harness_file.txt"
    secret.write_text("expected values the learner must not see\n")
    call = session.module("talk").swap.call(str(secret))
    if isolation.probe()[0] == isolation.PROCESS_GROUP:
        assert call.value is True  # swapped: the harness must still not follow the link
    else:
        assert call.value == "OSError"  # EROFS: it cannot even be swapped
    assert call.output == "before\nafter\n"
    assert secret.read_text() == "expected values the learner must not see\n"
    assert session.module("talk").say.call("still captured").output == "still captured\n"


def test_without_namespaces_a_swapped_capture_file_still_leads_nowhere(tmp_path, monkeypatch):
    """Where the worker's folder is writable to it, it can swap the file: the harness's own
    descriptor is what keeps the link unread."""
    monkeypatch.setattr(isolation, "probe", lambda: (isolation.PROCESS_GROUP, ()))
    secret = tmp_path / "harness_file.txt"
    secret.write_text("expected values the learner must not see\n")
    made = new_session(tmp_path)
    try:
        call = made.module("talk").swap.call(str(secret))
        assert call.value is True and call.output == "before\nafter\n"
        assert made.module("talk").say.call("still captured").output == "still captured\n"
    finally:
        made.close()
    assert secret.read_text() == "expected values the learner must not see\n"


def test_printed_paths_of_the_private_copy_read_as_the_learners_repository_names_them(tmp_path):
    """A warning or a printed __file__ names the module as the failure messages do (the
    display folder, e.g. assignments/toypkg), never the worker's private copy."""
    made = new_session(tmp_path, output_kb=4, display_dir="assignments/toypkg")
    try:
        output = made.module("talk").where.call().output
    finally:
        made.close()
    lines = output.splitlines()
    assert lines[0].startswith("assignments/toypkg/talk.py:")
    assert lines[0].endswith(": RuntimeWarning: overflow encountered in exp")
    assert lines[-1] == "assignments/toypkg/talk.py"
    assert "autograder-" not in output and str(tmp_path) not in output


def test_printed_paths_of_the_grading_pythons_libraries_start_at_the_library(tmp_path):
    """A warning raised in an installed package names its file from the package's own folder
    on (numpy/__init__.py), not the grading machine's site-packages folder."""
    made = new_session(tmp_path, output_kb=4)
    try:
        output = made.module("talk").library_warning.call().output
    finally:
        made.close()
    assert "numpy/__init__.py:7: RuntimeWarning: from inside a library" in output.splitlines()
    assert "site-packages" not in output and "/lib/python" not in output
