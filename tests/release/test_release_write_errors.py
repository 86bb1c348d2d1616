"""`autograder release` when the release cannot be written: one sentence that names the output
folder and the reason (it blamed the notes file, 'The notes file None cannot be read'), status
2, and no half-written release left behind for the rerun to refuse as a folder not empty."""

import errno
from pathlib import Path

from autograder.commands import release as release_command

from .conftest import ROOT


def _release(out: Path, capsys) -> tuple[int, str]:
    code = release_command.main(out=out, course=ROOT / "course.toml", pass_rule=None, notes=None)
    return code, capsys.readouterr().err


def test_an_output_folder_under_a_file_is_named_not_the_notes(tmp_path, capsys):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    out = tmp_path / "a-file" / "release"
    code, err = _release(out, capsys)
    assert code == 2
    assert err.startswith(f"Could not write the learner release to {out} (Not a directory: ")
    assert "notes" not in err
    assert err.count("\n") == 1


def test_a_disk_that_fills_midway_leaves_no_partial_release(tmp_path, capsys, monkeypatch):
    real = Path.write_bytes
    calls = []

    def fill_up(self, data):
        calls.append(self)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", fill_up)
    for out in (tmp_path / "new", tmp_path / "empty"):
        if out.name == "empty":
            out.mkdir()
        calls.clear()
        code, err = _release(out, capsys)
        assert code == 2
        assert err.startswith(
            f"Could not write the learner release to {out} (No space left on device: {calls[2]})"
        )
        assert len(calls) == 3  # two files were written before the disk filled
        assert out.exists() == (out.name == "empty")
        assert not out.exists() or not any(out.iterdir())
    monkeypatch.undo()
    code, err = _release(tmp_path / "empty", capsys)  # the rerun is not refused
    assert code == 0, err
