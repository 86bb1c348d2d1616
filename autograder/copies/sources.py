"""The learners' graded source, kept by grade-class for `autograder similarity`.

While it grades a learner, grade-class copies the Python files of the package it graded (the
exported commit's, or the plain folder's) into DIR/<learner>/source/, as they were graded. Only
regular files inside the package are copied: a symbolic link is never followed (a plain folder
may hold one pointing anywhere on the machine), nor a package folder that is itself a link out
of the submission; at most MAX_FILE_BYTES a file and MAX_TOTAL_BYTES in all.
"""

from __future__ import annotations

import os
from pathlib import Path

SOURCE_DIR = "source"
MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 2 * 2**20


def keep(package_dir: Path, submission: Path, staged: Path) -> int:
    """Copy the .py files of ``package_dir`` (inside ``submission``) into staged/source, their
    paths relative to the package; the number of files kept. Nothing when the package folder
    is not inside the submission once links are resolved."""
    try:
        inside = package_dir.resolve().is_relative_to(Path(submission).resolve())
    except OSError:
        return 0
    if not inside or package_dir.is_symlink() or not package_dir.is_dir():
        return 0
    target, kept, total = staged / SOURCE_DIR, 0, 0
    for folder, subfolders, files in os.walk(package_dir, followlinks=False):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            path = Path(folder) / name
            if not name.endswith(".py") or path.is_symlink() or not path.is_file():
                continue
            size = path.stat().st_size
            if size > MAX_FILE_BYTES or total + size > MAX_TOTAL_BYTES:
                continue
            destination = target / path.relative_to(package_dir)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(path.read_bytes())
            kept, total = kept + 1, total + size
    return kept


def read(learner_dir: Path, module_file: str) -> str | None:
    """A kept module's text (``module_file`` relative to the package, "attention.py"); None
    when the learner's folder has no such file (not written, or graded by a version that kept
    no source). Undecodable bytes become U+FFFD."""
    path = learner_dir / SOURCE_DIR / module_file
    if path.is_symlink() or not path.is_file():
        return None
    return path.read_bytes().decode("utf-8", "replace")


def has_source(learner_dir: Path) -> bool:
    """Whether grade-class kept this learner's source (DIR/<learner>/source)."""
    folder = learner_dir / SOURCE_DIR
    return folder.is_dir() and not folder.is_symlink()


def keep_graded(config, folder: Path, staged: Path, name: str) -> int:
    """keep() for the package grading finds in ``folder`` (grading.grader_package): 0 files
    when it finds none. Called before learner code runs, so the copy is what was submitted."""
    from autograder.grading.one_submission import grader_package

    package = grader_package(config, folder, name)
    return keep(package, folder, staged) if isinstance(package, Path) else 0
