"""`autograder release` when the release cannot be written: one sentence that names the output
folder and the reason (it blamed the notes file, 'The notes file None cannot be read'), status
2, and no half-written release left behind for the rerun to refuse as a folder not empty."""

import errno
from pathlib import Path

from autograder.commands import release as release_command

from .conftest import ROOT


def _release(out: Path, capsys, pass_rule=None, notes=None) -> tuple[int, str]:
    code = release_command.main(
        out=out, course=ROOT / "course.toml", pass_rule=pass_rule, notes=notes
    )
    return code, capsys.readouterr().err


def test_an_output_folder_under_a_file_is_named_not_the_notes(tmp_path, capsys):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    out = tmp_path / "a-file" / "release"
    code, err = _release(out, capsys)
    assert code == 2
    assert err.startswith(f"Could not write the learner release to {out} (Not a directory: ")
    assert "notes" not in err
    assert "free some space" not in err and "whose parents are folders" in err  # H43
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


def test_a_pass_rule_no_learner_can_meet_is_refused(tmp_path, capsys):
    """H43: min_score:500 was baked into grade.yml; the course has 120 points (notebook too)."""
    code, err = _release(tmp_path / "out", capsys, pass_rule="min_score:500")
    assert code == 2 and not (tmp_path / "out").exists()
    assert err == release_command.RULE_TOO_HIGH.format(rule="min_score:500", most=120) + "\n"
    assert _release(tmp_path / "ok", capsys, pass_rule="min_score:120")[0] == 0


def test_notes_lose_a_byte_order_mark_and_may_not_be_huge(tmp_path, capsys):
    notes = tmp_path / "notes.md"
    notes.write_bytes(b"\xef\xbb\xbf# Welcome\n")
    assert _release(tmp_path / "out", capsys, notes=notes)[0] == 0
    readme = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "# Welcome" in readme and "\ufeff" not in readme
    notes.write_bytes(b"x" * (release_command.MAX_NOTES + 1))
    code, err = _release(tmp_path / "big", capsys, notes=notes)
    assert code == 2 and "it is larger than 1024 KiB" in err
