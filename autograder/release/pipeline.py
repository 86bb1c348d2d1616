"""`autograder release`: the learner repository, built by an ordered list of small steps.

Each step of STEPS takes the Release being built and adds (or checks) files in memory; nothing
touches the disk until write_release. The order matters:

* add_readme comes after add_stubs: it quotes each stub's first docstring line;
* add_learner_notebooks (with --notebook) comes before the leak check;
* check_no_leaks comes after every step that adds content: it refuses a release holding a
  reference or stand-in body, a numerically stable softmax, a hidden test's name or a path
  under an instructor-only folder or file;
* add_manifest is last, so it hashes the protected files exactly as they will be written.

Determinism: files are kept as bytes keyed by POSIX path, written in sorted order with a fixed
modification time, and no step reads the clock, the environment or the file system order.

What each step adds: docs/internals/gradebook.md#the-release-pipeline.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.config import CourseConfig
from autograder.release import steps
from autograder.results.pass_rule import PassRule

#: Modification time of every file in the release (1980-01-01, the earliest a zip can hold).
FIXED_MTIME = 315532800

OUT_NOT_EMPTY = (
    "The release folder {path} already exists and is not empty; choose a new folder so that "
    "no old file is mixed into the release."
)


class ReleaseError(ValueError):
    """The release cannot be built; the message says why in full sentences."""


@dataclass
class Release:
    """A learner repository being built: files as bytes, and which of them are protected."""

    config: CourseConfig
    pass_rule: PassRule
    notes: str = ""
    notebook: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    #: (learner path, title, autograded points) of each notebook the release ships.
    # (path, title, autograded points, points graded by hand) of each shipped notebook
    notebooks: list[tuple[str, str, float, float]] = field(default_factory=list)
    protected: set[str] = field(default_factory=set)

    def add(self, path: str, data: bytes, *, protected: bool) -> None:
        self.files[path] = data
        if protected:
            self.protected.add(path)
        else:
            self.protected.discard(path)


Step = Callable[[Release], None]

STEPS: tuple[Step, ...] = (
    steps.add_stubs,
    steps.add_framework,
    steps.add_visible_graders,
    steps.add_catalogue,
    steps.add_learner_notebooks,
    steps.add_course_file,
    steps.add_pyproject,
    steps.add_readme,
    steps.add_workflow,
    steps.add_gitignore,
    steps.check_no_leaks,
    steps.add_manifest,
)


def build_release(
    config: CourseConfig, *, pass_rule: PassRule, notes: str = "", notebook: bool = False
) -> Release:
    """Run every step in order; ReleaseError (a sentence) when one refuses."""
    release = Release(config=config, pass_rule=pass_rule, notes=notes, notebook=notebook)
    for step in STEPS:
        try:
            step(release)
        except steps.StepError as error:
            raise ReleaseError(str(error)) from None
    return release


def write_release(release: Release, out: Path) -> list[Path]:
    """Write the files under out (new or empty) in sorted order with fixed times."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReleaseError(OUT_NOT_EMPTY.format(path=out))
    written = []
    folders = {out}
    for relative in sorted(release.files):
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(release.files[relative])
        target.chmod(0o644)
        os.utime(target, (FIXED_MTIME, FIXED_MTIME))
        folders.update(p for p in target.parents if p == out or out in p.parents)
        written.append(target)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        os.utime(folder, (FIXED_MTIME, FIXED_MTIME))
    return written
