"""Files written whole or not at all, with the permissions a plain open() would give."""

import os

import pytest

from autograder.atomic_files import atomic_write_bytes, atomic_write_text, current_umask


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path):
    path = atomic_write_text(tmp_path / "a.txt", "old")

    with pytest.raises(TypeError):
        atomic_write_text(path, 3)  # not text: the write fails half way
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_atomic_write_bytes_replaces_whole_or_leaves_the_old_file(tmp_path):
    path = atomic_write_bytes(tmp_path / "a.entry", b"old\x00")
    with pytest.raises(TypeError):
        atomic_write_bytes(path, "not bytes")  # the write fails half way
    assert path.read_bytes() == b"old\x00"
    assert atomic_write_bytes(path, b"\xffnew").read_bytes() == b"\xffnew"
    assert [p.name for p in tmp_path.iterdir()] == ["a.entry"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_an_atomically_written_report_gets_the_umasks_permissions(tmp_path, umask):
    """As a plain open() would give (grader.log beside it): not mkstemp's private 0600."""
    previous = os.umask(umask)
    try:
        assert current_umask() == umask
        report = atomic_write_text(tmp_path / "results.json", "{}")
        with open(tmp_path / "grader.log", "w") as log:
            log.write("")
    finally:
        os.umask(previous)
    mode = report.stat().st_mode & 0o777
    assert mode == 0o666 & ~umask == (tmp_path / "grader.log").stat().st_mode & 0o777
