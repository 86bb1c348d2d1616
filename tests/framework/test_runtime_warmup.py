"""The zygote's warm-up (runtime/warmup.py) leaves nothing a worker could see."""

from __future__ import annotations

import ast
import subprocess
import sys

import numpy as np
import pytest
import torch

from autograder.runtime import sandbox, warmup


def test_random_states_are_as_before():
    torch.manual_seed(1234)
    np.random.seed(1234)
    expected_torch, expected_numpy = torch.randn(5), np.random.normal(size=5)
    torch.manual_seed(1234)
    np.random.seed(1234)
    warmup.run()  # builds modules, whose weights draw from torch's generator
    assert torch.equal(torch.randn(5), expected_torch)
    assert np.array_equal(np.random.normal(size=5), expected_numpy)


@pytest.mark.parametrize("grad", [True, False])
def test_default_dtype_grad_mode_and_threads_are_as_before(grad):
    threads = torch.get_num_threads()
    torch.set_default_dtype(torch.float64)
    try:
        with torch.set_grad_enabled(grad):
            warmup.run()
            assert torch.is_grad_enabled() is grad
        assert torch.get_default_dtype() is torch.float64
        assert torch.get_num_threads() == threads
    finally:
        torch.set_default_dtype(torch.float32)


def test_on_one_thread_it_starts_no_thread():
    # As in the zygote: torch set to one thread, then the warm-up, then a fork needs 1 thread.
    code = (
        "import os, torch; torch.set_num_threads(1)\n"
        "from autograder.runtime import warmup; warmup.run()\n"
        "print(len(os.listdir('/proc/self/task')), torch.get_num_threads())"
    )
    env = {"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["1", "1"]


def test_it_imports_nothing_of_a_course_or_the_harness(tmp_path):
    # As the zygote runs it: from the worker's copy of the runtime under a stub package.
    framework = sandbox.write_framework(tmp_path)
    code = (
        "import sys; from autograder.runtime import warmup; warmup.run()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('autograder', 'tests', 't101'))))"
    )
    env = {"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(framework)}
    out = subprocess.run(
        [sys.executable, "-s", "-P", "-c", code],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = ast.literal_eval(out.stdout)
    assert "autograder.runtime.warmup" in loaded
    assert all(name == "autograder" or name.startswith("autograder.runtime") for name in loaded)
