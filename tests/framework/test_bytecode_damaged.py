"""A damaged file in the per-user bytecode cache (autograder/grading/bytecode.py): its module is
compiled from the source again and the file rewritten, instead of every later grade failing
with Python's "bad marshal data"."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grading.bytecode import bytecode_cache

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def module_dir(monkeypatch, tmp_path):
    """Bytecode writing off (PYTHONDONTWRITEBYTECODE=1), tmp_path the home, and an importable
    folder holding one module."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / "h11_cached_module.py").write_text("VALUE = 41 + 1\n")
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    sys.modules.pop("h11_cached_module", None)


@pytest.mark.parametrize("body", [b"\x00garbage" * 4, b"", b"\xe3"], ids=["garbage", "cut", "half"])
def test_a_damaged_cached_file_is_recompiled_and_rewritten(module_dir, tmp_path, body) -> None:
    cache = tmp_path / "cache"
    with bytecode_cache([module_dir / "course"], cache):
        assert importlib.import_module("h11_cached_module").VALUE == 42
        compiled = Path(importlib.util.cache_from_source(str(module_dir / "h11_cached_module.py")))
    assert compiled.is_file() and compiled.is_relative_to(cache)
    good = compiled.read_bytes()
    compiled.write_bytes(good[:16] + body)  # a valid header, then no code object
    del sys.modules["h11_cached_module"]
    with bytecode_cache([module_dir / "course"], cache):
        assert importlib.import_module("h11_cached_module").VALUE == 42
    assert compiled.read_bytes() == good
    assert "get_code" not in importlib.machinery.SourceFileLoader.__dict__  # put back


def test_an_error_of_the_source_itself_still_surfaces(module_dir, tmp_path) -> None:
    (module_dir / "h11_cached_module.py").write_text("VALUE = \x00\n")
    with bytecode_cache([module_dir / "x"], tmp_path / "c"), pytest.raises(SyntaxError):
        importlib.import_module("h11_cached_module")


BATCH = """
import importlib, sys
from pathlib import Path
from autograder.grading.bytecode import cache_bytecode
cache_bytecode(Path(sys.argv[1]))
print(importlib.import_module("h11_cached_module").VALUE)
"""


def test_the_batch_cache_recompiles_a_damaged_file_too(tmp_path) -> None:
    """grade-class keeps its cache in DIR/.pycache for the life of its session process."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "h11_cached_module.py").write_text("VALUE = 41 + 1\n")
    out = tmp_path / "out"

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-B", "-c", BATCH, str(out)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": f"{code}{os.pathsep}{ROOT}"},
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run() == "42"
    (compiled,) = (out / ".pycache").rglob("h11_cached_module*.pyc")
    compiled.write_bytes(compiled.read_bytes()[:16] + b"\x00garbage")
    assert run() == "42"
    assert b"garbage" not in compiled.read_bytes()
