"""The batch command's own process stays light: it only starts the session process (which has
torch from its fork server), shows progress and writes the class report. Importing torch there
cost about 2 s before the session process could even start (benchmarks/README.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("torch", "matplotlib")


@pytest.mark.parametrize("module", ["autograder.commands.grade_class", "autograder.commands.check"])
def test_importing_a_batch_command_imports_neither_torch_nor_matplotlib(module):
    probe = f"import sys, {module}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert completed.stdout.strip() == "[]", f"{module} imports {completed.stdout.strip()}"
