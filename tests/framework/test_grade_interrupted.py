"""Ctrl-C during `autograder grade`: exit status 130 and one sentence, not pytest's exit status
of a collection error read as "the graders could not run" (2), and nothing left behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TOY = Path(__file__).parent / "toy_course"
HANGS = "def scale(x, factor):\n    while True:\n        pass\n"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_the_tests_run_exits_130_with_a_sentence(tmp_path: Path) -> None:
    submission = tmp_path / "learner"
    shutil.copytree(TOY / "solution" / "toypkg", submission / "toypkg")
    (submission / "toypkg" / "scale.py").write_text(HANGS)
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    scratch.mkdir()

    def default_sigint() -> None:  # a shell's foreground job: Ctrl-C reaches the whole group
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.setpgid(0, 0)

    process = subprocess.Popen(
        [sys.executable, "-m", "autograder", "grade", str(submission), "--out", str(out)]
        + ["--course", str(TOY / "course.toml"), "--timeout", "30", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    log = out / "grader.log"
    deadline = time.monotonic() + 120
    while "test_scale_values" not in (log.read_text() if log.is_file() else ""):
        assert process.poll() is None and time.monotonic() < deadline, "the tests never started"
        time.sleep(0.1)
    time.sleep(0.5)  # inside the hanging test
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    expected = f"Interrupted: learner was not graded; its reports in {out} are incomplete."
    assert err.strip() == expected
    assert not (out / "results.json").exists()
    time.sleep(0.5)
    assert [p.name for p in scratch.iterdir()] == []
