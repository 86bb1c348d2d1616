"""Forbidden-API recorders, exercised in-process on a fake library (never on real torch here:
wrapping torch in the test process would leak into other tests)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from autograder.runtime.worker import guard

LEARNER_SOURCE = """\
import fakelib_for_guard as lib


def use_function(x):
    return lib.nn.attention(x)


def use_class():
    return lib.nn.Attention(3)


class Mine(lib.nn.Attention):
    def __init__(self):
        super().__init__(5)
"""


@pytest.fixture
def fakelib(tmp_path: Path):
    lib = types.ModuleType("fakelib_for_guard")
    nn = types.ModuleType("fakelib_for_guard.nn")

    def attention(x):
        return x * 2

    def helper(x):
        return nn.attention(x)  # library-internal use

    class Attention:
        def __init__(self, width):
            self.width = width

    nn.attention, nn.helper, nn.Attention = attention, helper, Attention
    lib.nn = nn
    sys.modules.update({"fakelib_for_guard": lib, "fakelib_for_guard.nn": nn})
    package_dir = tmp_path.resolve() / "root" / "toypkg"
    package_dir.mkdir(parents=True)
    learner_file = package_dir / "layers.py"
    learner_file.write_text(LEARNER_SOURCE)
    learner = types.ModuleType("toypkg_layers")
    exec(compile(LEARNER_SOURCE, str(learner_file), "exec"), learner.__dict__)
    yield types.SimpleNamespace(lib=lib, nn=nn, learner=learner, package_dir=package_dir)
    for name in ("fakelib_for_guard", "fakelib_for_guard.nn"):
        sys.modules.pop(name, None)
    guard.drain()


def test_calls_from_learner_files_are_recorded_with_file_and_line(fakelib):
    apis = ["fakelib_for_guard.nn.attention", "fakelib_for_guard.nn.Attention"]
    installed = guard.install(apis, str(fakelib.package_dir))
    assert installed == apis
    assert fakelib.learner.use_function(2) == 4
    assert fakelib.learner.use_class().width == 3
    assert fakelib.learner.Mine().width == 5
    assert guard.drain() == [
        ("fakelib_for_guard.nn.attention", "layers.py", 5),
        ("fakelib_for_guard.nn.Attention", "layers.py", 9),
        ("fakelib_for_guard.nn.Attention", "layers.py", 14),
    ]
    assert guard.drain() == []


def test_calls_without_a_learner_frame_are_not_recorded(fakelib):
    guard.install(["fakelib_for_guard.nn.attention"], str(fakelib.package_dir))
    assert fakelib.nn.helper(3) == 6
    assert fakelib.nn.attention(1) == 2
    assert guard.drain() == []


def test_learner_code_compiled_under_another_file_name_is_still_recorded(fakelib):
    # A learner module can compile its code under a library's file name, so that no frame on
    # the stack lies in the package; while the worker runs learner code that still records.
    guard.install(["fakelib_for_guard.nn.attention"], str(fakelib.package_dir))
    disguised = types.ModuleType("disguised")
    exec(compile(LEARNER_SOURCE, guard.__file__, "exec"), disguised.__dict__)
    assert disguised.use_function(2) == 4
    assert guard.drain() == []  # the worker's own code: nothing to charge
    with guard.learner_code("multi_head_attention.py"):
        assert disguised.use_function(2) == 4
    with guard.learner_code(None):
        assert disguised.use_function(3) == 6
    assert guard.drain() == [
        ("fakelib_for_guard.nn.attention", "multi_head_attention.py", 0),
        ("fakelib_for_guard.nn.attention", guard.UNKNOWN_FILE, 0),
    ]
    with guard.learner_code("multi_head_attention.py"):
        assert fakelib.learner.use_function(2) == 4  # a learner frame still names its line
    assert guard.drain() == [("fakelib_for_guard.nn.attention", "layers.py", 5)]


def test_repeated_calls_from_one_line_are_recorded_once(fakelib):
    guard.install(["fakelib_for_guard.nn.attention"], str(fakelib.package_dir))
    for _ in range(3):
        fakelib.learner.use_function(1)
    assert guard.drain() == [("fakelib_for_guard.nn.attention", "layers.py", 5)]


def test_names_that_do_not_resolve_are_skipped_and_nothing_is_wrapped_twice(fakelib):
    apis = [
        "fakelib_for_guard.nn.does_not_exist",
        "no_such_library_anywhere.thing",
        "fakelib_for_guard.missing_module.thing",
        "plainname",
        "fakelib_for_guard.nn.attention",
    ]
    assert guard.install(apis, str(fakelib.package_dir)) == ["fakelib_for_guard.nn.attention"]
    wrapped = fakelib.nn.attention
    assert guard.install(apis, str(fakelib.package_dir)) == []
    assert fakelib.nn.attention is wrapped and wrapped.__name__ == "attention"
