"""One writer at a time per output folder (gradebook/lock.py).

A second grade-class (or a merge) into a DIR that a live command is writing is refused with a
sentence naming that command, and touches nothing there: it would otherwise clear the other
run's DIR/.partial, where that run stages its learners. A merge does not copy a shard that a
grade-class is still writing. A lock whose holder died (kill -9) blocks nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.commands import grade_class, merge
from autograder.gradebook import class_output, lock, store

from .conftest import TOY_COURSE, grade_class_main, read_gradebook

STARTED = "started 20"  # the holder's start time, an ISO date of this century


def _roster(tmp_path: Path) -> Path:
    roster = tmp_path / "roster"
    (roster / "ada").mkdir(parents=True, exist_ok=True)
    return roster


def _no_grading(monkeypatch) -> list:
    started: list = []
    monkeypatch.setattr(grade_class, "grade_pending", lambda *args, **kw: started.append(args))
    monkeypatch.setattr(class_output, "finish", lambda *args, **kw: 0)
    return started


def _shard_with(tmp_path: Path, learner: str) -> Path:
    shard = tmp_path / "shard1"
    folder = store.learner_dir(shard, learner)
    folder.mkdir(parents=True)
    record = store.LearnerRecord(learner=learner, error="Its repository is empty.")
    (folder / store.RECORD_FILE).write_text(record.to_json(), encoding="utf-8")
    return shard


def test_a_second_grade_class_into_a_folder_being_written_is_refused(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    out.mkdir()
    in_progress = out / store.PARTIAL_DIR / "bea.0123abcd"  # the other run's learner
    in_progress.mkdir(parents=True)
    started = _no_grading(monkeypatch)
    with lock.hold(out, "grade-class"):
        code = grade_class_main(_roster(tmp_path), out)
    err = capsys.readouterr().err
    assert code == 2
    assert f"Another autograder command (grade-class, process {os.getpid()}, {STARTED}" in err
    assert f"is writing to {out}; wait for it to finish" in err
    assert in_progress.is_dir()  # the other run's half-written learner is left alone
    assert started == []
    assert not (out / store.GRADEBOOK_FILE).exists()


def test_the_folder_is_free_again_when_the_command_ends(tmp_path, monkeypatch):
    out = tmp_path / "out"
    started = _no_grading(monkeypatch)
    assert grade_class_main(_roster(tmp_path), out) == 0
    assert grade_class_main(_roster(tmp_path), out) == 0  # its own lock is gone too
    assert len(started) == 2
    with lock.hold(out, "merge"):  # and nothing holds it now
        pass


def test_a_lock_whose_holder_was_killed_blocks_nothing(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from autograder.gradebook import lock;"
            "held = lock.hold(Path(sys.argv[1]), 'grade-class'); print('held', flush=True);"
            "time.sleep(600)",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        started = _no_grading(monkeypatch)
        assert grade_class_main(_roster(tmp_path), out) == 2
        assert f"(grade-class, process {holder.pid}, {STARTED}" in capsys.readouterr().err
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        assert (out / lock.LOCK_FILE).exists()  # left behind, as after a kill -9
        assert grade_class_main(_roster(tmp_path), out) == 0
        assert len(started) == 1
    finally:
        holder.kill()
        holder.wait(timeout=30)
        holder.stdout.close()


def test_merge_does_not_copy_a_shard_still_being_graded(tmp_path, capsys):
    shard = _shard_with(tmp_path, "ada")
    out = tmp_path / "merged"
    with lock.hold(shard, "grade-class"):
        code = merge.main(shards=[shard], out=out, course=TOY_COURSE, quiet=True)
    err = capsys.readouterr().err
    assert code == 2
    assert f"The shard folder {shard} is still being written by another autograder command" in err
    assert "(grade-class, process" in err and "merge it once that run has finished" in err
    assert not out.exists()
    assert merge.main(shards=[shard], out=out, course=TOY_COURSE, quiet=True) == 1  # its row errs
    assert [row["learner"] for row in read_gradebook(out / store.GRADEBOOK_FILE)] == ["ada"]


def test_merge_into_a_folder_being_written_is_refused(tmp_path, capsys):
    shard = _shard_with(tmp_path, "ada")
    out = tmp_path / "merged"
    out.mkdir()
    in_progress = out / store.PARTIAL_DIR / "bea.0123abcd"
    in_progress.mkdir(parents=True)
    with lock.hold(out, "grade-class"):
        code = merge.main(shards=[shard], out=out, course=TOY_COURSE, quiet=True)
    assert code == 2
    assert f"is writing to {out.resolve()}; wait for it" in capsys.readouterr().err
    assert in_progress.is_dir()
    assert not (out / store.GRADEBOOK_FILE).exists()


def test_a_shard_without_a_lock_file_is_read_as_before(tmp_path):
    """Shards downloaded as CI artifacts may come without their dot-files."""
    shard = _shard_with(tmp_path, "ada")
    assert not (shard / lock.LOCK_FILE).exists()
    with lock.hold(shard, "merge", shared=True), lock.hold(shard, "merge", shared=True):
        pass  # two readers at once
    assert not (shard / lock.LOCK_FILE).exists()  # a reader makes no lock file


def test_the_holder_is_unknown_while_it_has_not_written_its_name(tmp_path):
    (tmp_path / lock.LOCK_FILE).write_text("")
    fd = os.open(tmp_path / lock.LOCK_FILE, os.O_RDWR)
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(lock.FolderBusy) as busy:
            lock.hold(tmp_path, "grade-class")
    finally:
        os.close(fd)
    assert str(busy.value).startswith(f"Another autograder command is writing to {tmp_path};")


def test_a_folder_it_cannot_write_in_fails_on_the_lock_file(tmp_path, monkeypatch):
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):
        if os.fspath(path) == os.fspath(tmp_path / lock.LOCK_FILE) and flags & os.O_CREAT:
            raise OSError(30, "Read-only file system", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(OSError) as error:
        lock.hold(tmp_path, "grade-class")
    assert error.value.filename == os.fspath(tmp_path / lock.LOCK_FILE)
    monkeypatch.setattr(os, "open", real_open)
    with lock.hold(tmp_path, "grade-class"):
        pass


def test_a_folder_of_another_user_fails_on_the_lock_file_with_a_sentence(tmp_path, monkeypatch):
    real_open = os.open

    def not_mine(path, flags, *args, **kwargs):
        if os.fspath(path) == os.fspath(tmp_path / lock.LOCK_FILE):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", not_mine)
    with pytest.raises(lock.LockError) as error:
        lock.hold(tmp_path, "grade-class")
    assert str(error.value) == lock.CANNOT_LOCK.format(
        path=tmp_path / lock.LOCK_FILE,
        why="Permission denied",
        command="grade-class",
        folder=tmp_path,
    )


def test_a_lock_file_that_is_a_link_is_not_followed(tmp_path, monkeypatch, capsys):
    _no_grading(monkeypatch)
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("mine")
    (out / lock.LOCK_FILE).symlink_to(target)
    assert grade_class_main(_roster(tmp_path), out) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert lock.LINKED_LOCK.format(path=out / lock.LOCK_FILE, command="grade-class") in err
    assert target.read_text() == "mine"


def test_a_merge_reading_the_folder_is_not_named_as_the_last_writer(tmp_path):
    """The lock file names the last command that wrote the folder; while a merge reads it
    (a shared lock), that writer may be long gone and must not be named."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    (tmp_path / lock.LOCK_FILE).write_text(
        f'{{"pid": {ended.pid}, "command": "grade-class", "started": "2026-12-01T00:00:00"}}\n'
    )
    with lock.hold(tmp_path, "merge", shared=True):
        with pytest.raises(lock.FolderBusy) as busy:
            lock.hold(tmp_path, "grade-class")
    assert str(busy.value).startswith(f"Another autograder command is writing to {tmp_path};")


@pytest.mark.parametrize("odd", ["folder", "pipe"])
def test_a_lock_file_that_is_not_a_file_is_refused_with_a_sentence(
    tmp_path, monkeypatch, capsys, odd
):
    _no_grading(monkeypatch)
    out = tmp_path / "out"
    out.mkdir()
    if odd == "folder":
        (out / lock.LOCK_FILE).mkdir()
    else:
        os.mkfifo(out / lock.LOCK_FILE)
    assert grade_class_main(_roster(tmp_path), out) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert lock.ODD_LOCK.format(path=out / lock.LOCK_FILE, command="grade-class") in err


def test_merge_reads_a_shard_whose_lock_file_is_a_pipe_without_waiting(tmp_path):
    """Opening a FIFO for reading waits for a writer: merge hung (H33)."""
    shard = _shard_with(tmp_path, "ada")
    os.mkfifo(shard / lock.LOCK_FILE)
    out = tmp_path / "merged"
    assert merge.main(shards=[shard], out=out, course=TOY_COURSE, quiet=True) == 1
    assert [row["learner"] for row in read_gradebook(out / store.GRADEBOOK_FILE)] == ["ada"]
