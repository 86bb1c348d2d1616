"""The project's own modules keep their bytecode in the per-user cache when bytecode writing is
off (grading/bytecode.cache_own_modules): one package's submodules only, never a library's, and
a damaged file there is compiled again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from pathlib import Path
from autograder.grading.bytecode import cache_own_modules
print(cache_own_modules("h23own", Path(sys.argv[1])))
print(cache_own_modules("h23own", Path(sys.argv[1])))  # a second call changes nothing
import h23own.inner, h23other.inner
print(h23own.inner.VALUE + h23other.inner.VALUE)
"""


def _packages(tmp_path: Path) -> Path:
    code = tmp_path / "code"
    for package in ("h23own", "h23other"):
        (code / package).mkdir(parents=True)
        (code / package / "__init__.py").write_text("")
        (code / package / "inner.py").write_text("VALUE = 20 + 1\n")
    return code


def _run(tmp_path: Path, code: Path, *flags: str) -> list[str]:
    environment = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": f"{code}{os.pathsep}{ROOT}"}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [sys.executable, *flags, "-c", SCRIPT, str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _compiled(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.rglob("*.pyc") if "h23" in str(p))


def test_only_the_named_package_is_cached_and_read_back(tmp_path) -> None:
    code = _packages(tmp_path)
    cache = tmp_path / "cache"
    assert _run(tmp_path, code, "-B") == [str(cache), "None", "42"]
    assert _compiled(cache) == [f"inner.cpython-{sys.version_info[0]}{sys.version_info[1]}.pyc"]
    assert [str(p.relative_to(cache)) for p in cache.rglob("*.pyc")][0].startswith(
        str(code.relative_to("/") / "h23own")
    )
    assert not (code / "h23own" / "__pycache__").exists()
    assert not (code / "h23other" / "__pycache__").exists()
    (compiled,) = cache.rglob("inner.*.pyc")
    good = compiled.read_bytes()
    compiled.write_bytes(good[:16] + b"\x00garbage")  # a valid header, then no code object
    assert _run(tmp_path, code, "-B")[-1] == "42"
    assert compiled.read_bytes() == good


def test_nothing_changes_where_bytecode_writing_is_on(tmp_path) -> None:
    code = _packages(tmp_path)
    assert _run(tmp_path, code) == ["None", "None", "42"]
    assert not (tmp_path / "cache").exists()
    assert (code / "h23own" / "__pycache__").is_dir()  # Python's own place, as before
