"""Cloning or updating the learners' copies (gradebook/fetch.py) with a progress bar."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from autograder.gradebook import fetch, roster


def fetch_pending(pending: list[roster.Learner], out: Path, err: Console) -> list[roster.Learner]:
    """Clone or update the copies of the pending learners given by clone URL (fetch.py), with
    a progress bar; a learner whose clone failed gets that error as their row."""
    count = sum(bool(learner.url) for learner in pending)
    if not count:
        return pending
    columns = (TextColumn("[bold]fetching"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("fetching", total=count)

        def say(line: str) -> None:  # a problem: said even with --quiet
            if err.quiet:
                print(line, file=sys.stderr)
            else:
                progress.console.print(line, markup=False, highlight=False)

        return fetch.fetch(
            pending, out, say=say, done=lambda learner: progress.update(task, advance=1)
        )
