"""grade-class with an --out that exists but cannot be written in (a read-only file system):
the command itself fails to write there before any session process starts, so the command line
ends with its one sentence (atomic_files.CANNOT_WRITE) instead of the session's traceback
ahead of it."""

from __future__ import annotations

import errno
import os

import pytest

from autograder.commands import grade_class

from .conftest import grade_class_main


def test_a_read_only_out_fails_in_the_command_before_grading(tmp_path, monkeypatch):
    roster = tmp_path / "roster"
    (roster / "ada").mkdir(parents=True)
    out = tmp_path / "out"
    out.mkdir()
    real_mkdir = os.mkdir

    def read_only(path, *args, **kwargs):
        if os.fspath(path).startswith(os.fspath(out) + os.sep):
            raise OSError(errno.EROFS, "Read-only file system", os.fspath(path))
        return real_mkdir(path, *args, **kwargs)

    started = []
    monkeypatch.setattr(os, "mkdir", read_only)
    monkeypatch.setattr(grade_class, "grade_pending", lambda *args, **kw: started.append(args))
    with pytest.raises(OSError) as error:
        grade_class_main(roster, out)
    assert error.value.errno == errno.EROFS
    assert error.value.filename == os.fspath(out / ".partial")
    assert started == []
