"""The private copy of the learner's package and the worker's environment (no worker started)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder.runtime import LearnerError, LearnerSession, Limits
from autograder.runtime.harness import private_copy, worker_launch
from autograder.runtime.shared import messages


@pytest.fixture
def package(tmp_path: Path) -> Path:
    pkg = tmp_path / "submission" / "toypkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "funcs.py").write_text("X = 1\n")
    (pkg / "sub" / "deep.py").write_text("Y = 2\n")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "funcs.cpython-311.pyc").write_bytes(b"stale")
    return pkg


def copied_files(copy: private_copy.PrivateCopy) -> list[str]:
    found = []
    for dirpath, _, filenames in os.walk(copy.root):
        for name in filenames:
            found.append(Path(dirpath, name).relative_to(copy.root).as_posix())
    return sorted(found)


def test_copy_holds_the_regular_files_and_no_bytecode(package: Path):
    copy = private_copy.copy_package(package, "toypkg")
    try:
        assert copied_files(copy) == ["toypkg/__init__.py", "toypkg/funcs.py", "toypkg/sub/deep.py"]
        assert copy.refused == {}
        assert (copy.root / "toypkg" / "funcs.py").read_text() == "X = 1\n"
        assert copy.root.is_relative_to(copy.base) and copy.base.stat().st_mode & 0o077 == 0
    finally:
        shutil.rmtree(copy.base)


def test_symlinks_out_of_the_package_are_refused_and_inner_ones_copied(package: Path, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("token")
    (package / "leak.py").symlink_to(secret)
    (package / "alias.py").symlink_to(package / "funcs.py")
    (package / "loop").symlink_to(package)
    copy = private_copy.copy_package(package, "toypkg")
    try:
        assert copy.refused == {
            "leak.py": "a symbolic link to outside your package",
            "loop": "a symbolic link to a folder",
        }
        assert not (copy.root / "toypkg" / "leak.py").exists()
        alias = copy.root / "toypkg" / "alias.py"
        assert alias.read_text() == "X = 1\n" and not alias.is_symlink()
    finally:
        shutil.rmtree(copy.base)


def test_a_package_over_the_size_cap_is_refused_and_leaves_nothing(package, monkeypatch):
    monkeypatch.setattr(private_copy, "MAX_PACKAGE_BYTES", 10)
    before = set(Path(os.environ.get("TMPDIR", "/tmp")).glob("autograder-*"))
    (package / "weights.bin").write_bytes(b"\x00" * 64)
    with pytest.raises(private_copy.PackageTooLarge):
        private_copy.copy_package(package, "toypkg")
    assert set(Path(os.environ.get("TMPDIR", "/tmp")).glob("autograder-*")) == before


def test_a_missing_package_gives_an_empty_private_root(tmp_path: Path):
    copy = private_copy.copy_package(tmp_path / "nowhere" / "toypkg", "toypkg")
    try:
        assert copy.root.is_dir() and list(copy.root.iterdir()) == []
    finally:
        shutil.rmtree(copy.base)


def test_worker_environment_is_an_allow_list(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("AUTOGRADER_CANARY", "visible-only-to-the-harness")
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    env = worker_launch.worker_environment(tmp_path / "root", tmp_path / "framework")
    assert "GITHUB_TOKEN" not in env and "AUTOGRADER_CANARY" not in env
    assert env["HOME"] == env["TMPDIR"] == str(tmp_path / "root")
    assert env["PYTHONPATH"] == str(tmp_path / "framework")
    assert env["LANG"] == env["LC_ALL"] == "C.UTF-8"
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1"
    assert env["PYTHONHASHSEED"] == "0" and env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["OPENBLAS_CORETYPE"] == "Haswell"
    allowed = {"PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LANG", "LC_ALL", "HOME"}
    allowed |= {"TMPDIR", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED"}
    allowed |= {"PYTHONNOUSERSITE", "OMP_NUM_THREADS", "MKL_NUM_THREADS"}
    assert set(env) <= allowed


def test_a_session_on_a_too_large_package_fails_every_call_without_a_worker(package, monkeypatch):
    monkeypatch.setattr(private_copy, "MAX_PACKAGE_BYTES", 10)
    (package / "weights.bin").write_bytes(b"\x00" * 64)
    session = LearnerSession(
        package, package="toypkg", limits=Limits(), display_dir="assignments/toypkg"
    )
    try:
        with pytest.raises(LearnerError) as info:
            session.module("funcs").f(1)
        assert info.value.kind == "import_error"
        assert info.value.feedback == messages.TOO_LARGE.format(
            expected="assignments/toypkg", mb=20
        )
        with pytest.raises(LearnerError) as again:
            session.module("funcs").g()
        assert again.value is info.value and session._channel.worker is None
    finally:
        session.close()
