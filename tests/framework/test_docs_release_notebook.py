"""The instructor guide says what `release --notebook` does (it took '~a minute', which was
neither measured nor true: about 20 s on two cores, nearly all of it starting nbgrader)."""

from __future__ import annotations

from pathlib import Path

from autograder.notebook import runner

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "instructor-guide.md"


def test_the_guide_says_what_release_notebook_runs() -> None:
    text = " ".join(GUIDE.read_text(encoding="utf-8").split())
    item = text.split("* `--notebook`:", 1)[1].split("* `--notes FILE`", 1)[0]
    assert "a minute" not in item
    assert "runs nbgrader's `generate_assignment` on a sandboxed copy" in item
    assert "executes no cell" in item
    # ... as the runner's release mode does: generate_assignment only, no execution.
    assert "``release`` (nbgrader generate_assignment only)" in " ".join(runner.__doc__.split())
