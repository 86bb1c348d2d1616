"""The grade-class session process on a full disk: one sentence on stderr and exit status 2,
as the command line says it (autograder/atomic_files.py cannot_write), never a traceback."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from autograder.batch import session_process


class _Batch:
    """The parts of BatchSession that _session uses; not_graded fails as on a full disk."""

    started = False

    def __init__(self, row: Path) -> None:
        self.row = row
        self.removed = False

    def not_graded(self, reason: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.row))

    def remove_scratch(self) -> None:
        self.removed = True

    def remove_expected(self) -> None:
        pass


def _log_full(log: Path):
    def run(batch, settings) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(log))

    return run


def test_a_full_disk_for_the_log_and_the_rows_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    row = tmp_path / ".partial" / "good" / "summary.md"
    monkeypatch.setattr(session_process, "_run", _log_full(tmp_path / session_process.SESSION_LOG))
    batch = _Batch(row)
    with pytest.raises(SystemExit) as ended:
        session_process._session(batch, settings=None)  # type: ignore[arg-type]
    assert ended.value.code == 2
    assert capsys.readouterr().err == (
        f"Could not write {row}: No space left on device. Free some space or choose another "
        "output folder, then run the same command again; the files written before this one "
        "are complete and kept.\n"
    )
    assert batch.removed  # the scratch goes as it does after any other end


def test_other_os_errors_still_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Denied(_Batch):
        def not_graded(self, reason: str) -> None:
            raise PermissionError(errno.EACCES, "Permission denied", str(self.row))

    monkeypatch.setattr(session_process, "_run", _log_full(tmp_path / session_process.SESSION_LOG))
    with pytest.raises(PermissionError):
        session_process._session(Denied(tmp_path / "row"), settings=None)  # type: ignore[arg-type]
