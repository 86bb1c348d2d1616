"""How learner failures are described (in-process, no worker): kinds, learner-only tracebacks,
sanitized messages, and the lazy importer's sentences for missing or broken modules."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from autograder.runtime.shared import messages
from autograder.runtime.shared.messages import compose
from autograder.runtime.worker.describe import classify, describe, shown_path
from autograder.runtime.worker.importer import ImportFailure, LearnerImporter


@pytest.mark.parametrize(
    ("exc", "phase", "kind"),
    [
        (NotImplementedError("todo"), "call", "not_implemented"),
        (SystemExit(2), "call", "exit"),
        (KeyboardInterrupt(), "call", "exit"),
        (GeneratorExit(), "import", "exit"),
        (MemoryError(), "call", "memory"),
        (RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried"), "call", "memory"),
        (SyntaxError("bad"), "import", "syntax_error"),
        (SyntaxError("from eval"), "call", "exception"),
        (ValueError("x"), "import", "import_error"),
        (ValueError("x"), "call", "exception"),
    ],
)
def test_exceptions_are_classified_into_kinds(exc, phase, kind):
    assert classify(exc, phase) == kind


def test_sanitize_strips_terminal_escapes_and_caps_the_length():
    text = "\x1b[31mred\x1b[0m \x1b]0;title\x07bell\x07 tab\tnew\nline\r\n\x00end\x9b"
    assert messages.sanitize(text) == "red bell tab\tnew\nline\nend"
    assert messages.sanitize("bad \ud800 value") == "bad \ufffd value"  # UTF-8 cannot hold it
    capped = messages.sanitize("x" * 2500)
    assert capped.startswith("x" * 2000) and capped.endswith("[... 500 more characters]")


def raise_through_library(root: Path):
    """Run a learner file (under root) that fails inside a library call."""
    learner_file = root / "toypkg" / "layers.py"
    learner_file.parent.mkdir(parents=True, exist_ok=True)
    learner_file.write_text("import json\n\ndef load(text):\n    return json.loads(text)\n")
    namespace: dict = {}
    exec(compile(learner_file.read_text(), str(learner_file), "exec"), namespace)
    try:
        namespace["load"]("{not json")
    except ValueError as exc:
        return exc
    raise AssertionError("the learner code did not raise")


def test_describe_keeps_only_learner_frames_relative_to_the_root(tmp_path: Path):
    root = tmp_path.resolve()
    exc = raise_through_library(root)
    error = describe(exc, phase="call", root=str(root), memory_mb=512)
    assert error["kind"] == "exception" and error["exc_type"] == "JSONDecodeError"
    assert error["exc_mro"][:3] == ["JSONDecodeError", "ValueError", "Exception"]
    assert error["location"] == "toypkg/layers.py:4 in load"
    assert error["traceback"].splitlines() == [
        '  File "toypkg/layers.py", line 4, in load',
        "    return json.loads(text)",
        f"JSONDecodeError: {error['message']}",
    ]
    assert str(tmp_path) not in error["traceback"] and "json/" not in error["traceback"]
    feedback = compose(error, "load(...)")
    assert feedback.startswith("load(...) raised JSONDecodeError at toypkg/layers.py:4 in load: ")


def test_describe_names_learner_files_as_their_repository_does(tmp_path: Path):
    root = tmp_path.resolve()
    exc = raise_through_library(root)
    error = describe(exc, phase="call", root=str(root), memory_mb=512, shown_dir="hw/toypkg/")
    assert error["location"] == "hw/toypkg/layers.py:4 in load"
    assert error["traceback"].splitlines()[:2] == [
        '  File "hw/toypkg/layers.py", line 4, in load',
        "    return json.loads(text)",  # the source line is still read from the private copy
    ]
    assert shown_path("toypkg/sub/a.py", "assignments/toypkg") == "assignments/toypkg/sub/a.py"
    assert shown_path("toypkg/a.py", "") == "toypkg/a.py"


def test_compose_names_the_call_for_each_kind():
    base = {"exc_type": "X", "message": "m", "location": "p/a.py:3 in f", "memory_mb": 256}
    assert compose(
        {**base, "kind": "not_implemented"}, "f(...)"
    ) == messages.NOT_IMPLEMENTED.format(call="f(...)", where=" at p/a.py:3 in f")
    assert "sys.exit()" in compose({**base, "kind": "exit"}, "f(...)")
    assert "(the limit is 256 MB)" in compose({**base, "kind": "memory"}, "f(...)")
    assert compose({**base, "kind": "exception", "message": ""}, "f(...)") == (
        "f(...) raised X at p/a.py:3 in f."
    )
    bad = {"kind": "bad_return", "reason": "a numpy array of dtype object cannot be checked"}
    assert compose(bad, "f(...)") == (
        "f(...) returned a value the grader cannot read: a numpy array of dtype object cannot "
        "be checked."
    )


def test_compose_in_a_hidden_test_leaves_out_the_message_and_own_class_names():
    base = {"kind": "exception", "message": "(2, 7) [0.25]", "location": "p/a.py:3 in f"}
    builtin = {**base, "exc_type": "KeyError", "exc_mro": ["KeyError", "LookupError"]}
    assert compose(builtin, "f(...)", hidden=True) == messages.EXCEPTION_HIDDEN.format(
        call="f(...)",
        exc_type="KeyError",
        where="",  # a location is learner-forgeable text
    )
    own = {**base, "exc_type": "Shape_2_7", "exc_mro": ["Shape_2_7", "ValueError", "Exception"]}
    hidden = compose(own, "f(...)", hidden=True)
    assert "Shape_2_7" not in hidden and "0.25" not in hidden
    assert "raised an exception of a class of your own derived from ValueError. A" in hidden
    forged = {**base, "exc_type": "x", "exc_mro": ["x", "not a name", "object"]}
    assert "derived from Exception. A hidden" in compose(forged, "f(...)", hidden=True)
    assert compose(own, "f(...)") == "f(...) raised Shape_2_7 at p/a.py:3 in f: (2, 7) [0.25]"
    leaving = {
        **own,
        "kind": "exit",
        "exc_type": "Shape_2_7",
        "exc_mro": ["Shape_2_7", "SystemExit"],
    }
    assert "raised an exception of a class of your own derived from SystemExit;" in compose(
        leaving, "f(...)", hidden=True
    )
    # a worker that saw earlier hidden inputs can forge an import's answer too
    importing = {**own, "kind": "import_error", "feedback": "LEAK (2, 7) [0.25]"}
    assert compose(importing, "Importing a.py", hidden=True) == messages.EXCEPTION_HIDDEN.format(
        call="Importing a.py",
        exc_type="an exception of a class of your own derived from ValueError",
        where="",
    )


@pytest.fixture
def importer(tmp_path: Path):
    package = f"toypkg_{uuid.uuid4().hex[:8]}"
    root = tmp_path.resolve()
    (root / package).mkdir()
    made = LearnerImporter(
        package,
        str(root),
        shown_dir=f"assignments/{package}",
        refused={"leak.py": "a symbolic link to outside your package"},
        describe=lambda exc, phase: describe(
            exc, phase=phase, root=str(root), memory_mb=1, shown_dir=f"assignments/{package}"
        ),
    )
    yield made
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


def test_a_failing_init_falls_back_to_a_bare_package(importer):
    pkg_dir = Path(importer.root) / importer.package
    (pkg_dir / "__init__.py").write_text("from .broken import thing\n")
    (pkg_dir / "broken.py").write_text("def f(:\n    pass\n")
    (pkg_dir / "good.py").write_text("VALUE = 42\n")
    package = importer.import_package()
    assert importer.init_error["kind"] == "syntax_error"
    assert package.__path__ == [str(pkg_dir)]
    assert importer.import_module("good").VALUE == 42
    with pytest.raises(ImportFailure) as info:
        importer.import_module("broken")
    error = info.value.error
    assert (
        error["kind"] == "syntax_error"
        and error["location"] == f"assignments/{importer.package}/broken.py:1"
    )
    assert error["feedback"].startswith(
        f"assignments/{importer.package}/broken.py has a syntax error at line 1"
    )


def test_missing_refused_and_misnamed_modules_get_sentences(importer):
    pkg = importer.package
    with pytest.raises(ImportFailure) as info:
        importer.import_module("softmax")
    assert info.value.error["feedback"] == (
        f"Could not find assignments/{pkg}/softmax.py in your submission; the assignment "
        "expects that file at that path in your repository."
    )
    assert info.value.error["kind"] == "import_error"
    with pytest.raises(ImportFailure) as info:
        importer.import_module("leak")
    assert "a symbolic link to outside your package" in info.value.error["feedback"]
    (Path(importer.root) / pkg / "named.py").write_text("def sofmax(x):\n    return x\n")
    module = importer.import_module("named")
    with pytest.raises(ImportFailure) as info:
        importer.resolve(module, "named", "softmax")
    assert info.value.error["feedback"].startswith(
        f"assignments/{pkg}/named.py does not define softmax;"
    )
    assert importer.resolve(module, "named", "sofmax")(3) == 3


def test_exceptions_at_import_name_the_file_and_line(importer):
    pkg = importer.package
    (Path(importer.root) / pkg / "nameerr.py").write_text("import math\n\nx = undefined_name\n")
    with pytest.raises(ImportFailure) as info:
        importer.import_module("nameerr")
    error = info.value.error
    assert error["kind"] == "import_error" and error["exc_type"] == "NameError"
    assert error["feedback"] == (
        f"Importing assignments/{pkg}/nameerr.py raised NameError at "
        f"assignments/{pkg}/nameerr.py:3 in <module>: "
        "name 'undefined_name' is not defined"
    )


def test_a_missing_package_folder_reports_each_module_missing(tmp_path: Path):
    importer = LearnerImporter(
        "toypkg_absent",
        str(tmp_path),
        shown_dir="sub/toypkg_absent",
        refused={},
        describe=lambda exc, phase: {},
    )
    try:
        importer.import_package()
        assert importer.package_missing
        with pytest.raises(ImportFailure) as info:
            importer.import_module("funcs")
        assert info.value.error["feedback"] == (
            "Could not find sub/toypkg_absent/funcs.py in your submission; the assignment "
            "expects that file at that path in your repository."
        )
    finally:
        sys.modules.pop("toypkg_absent", None)
