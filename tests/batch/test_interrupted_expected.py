"""Ctrl-C of grade-class (SIGINT to its process group) in the middle of a batch: status 130,
the resume sentence, and nothing of the batch left behind: no scratch folder in TMPDIR and no
DIR/.expected (the expected values the learners' children shared, which the stopped session
process left in the class folder)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.batch.conftest import DEADLINE, TOY_COURSE, wait_until_recorded


def test_ctrl_c_mid_batch_leaves_no_expected_values_and_no_scratch(
    toy_class: dict, tmp_path: Path
) -> None:
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    scratch.mkdir()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade-class",
            str(toy_class["roster"]),
            "--out",
            str(out),
            "--course",
            str(TOY_COURSE),
            "--deadline",
            DEADLINE,
            "-q",
            "-j",
            "1",
        ],
        cwd=toy_class["base"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch)},
        start_new_session=True,
    )
    wait_until_recorded(process, out)  # the session runs: DIR/.expected is in use
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "run the same command again to grade the rest" in err
    assert "Traceback" not in err
    assert not (out / ".expected").exists()
    assert [p.name for p in scratch.iterdir() if not p.name.startswith("pymp-")] == []
