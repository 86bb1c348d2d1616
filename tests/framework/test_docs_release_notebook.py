"""The release page says what `release --notebook` does (it took '~a minute', which was
neither measured nor true: about 20 s on two cores, nearly all of it starting nbgrader)."""

from __future__ import annotations

from pathlib import Path

from autograder.notebook import runner

PAGE = Path(__file__).resolve().parents[2] / "docs" / "instructor" / "release.md"


def test_the_release_page_says_what_release_notebook_runs() -> None:
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    said = text.split("`--notebook` needs the `notebook` extra", 1)[1].split("## ", 1)[0]
    assert "a minute" not in said
    assert "runs nbgrader's `generate_assignment` on a sandboxed copy" in said
    assert "executes no cell" in said
    assert "about 20 s on two cores" in said
    # ... as the runner's release mode does: generate_assignment only, no execution.
    assert "``release`` (nbgrader generate_assignment only)" in " ".join(runner.__doc__.split())
