"""Digests of what a grade depends on besides the options: the course's files and the manifest.

A batch's records are kept by a rerun, and shards are merged, only when they were graded the
same way (job.run_settings). The options alone did not say so (H48): a course.toml with other
points or time limits, an edited grader, or a release manifest edited in place kept every
earlier grade and merged with them, and the gradebook mixed totals out of 100 and of 130. So
the settings hold a digest of the course's files (course.toml, the graders, the references and
the catalogue of mistakes) and of the manifest's bytes (two copies of one manifest are the same
setting, wherever they lie).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from autograder.config import CourseConfig

SKIPPED = ("__pycache__",)  # compiled files follow the sources; their bytes differ by machine


def course_digest(config: CourseConfig) -> str:
    """sha256 (hex) of course.toml and every file of the grader folders, the reference folder
    and the mistakes catalogue, by their path relative to the course's folder."""
    digest = hashlib.sha256()
    _add(digest, config.path, config.root)
    for folder in _folders(config):
        for path in _files(folder):
            _add(digest, path, config.root)
    return digest.hexdigest()


def file_digest(path: Path | None) -> str:
    """sha256 (hex) of the file's bytes; "" for none."""
    if path is None:
        return ""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _folders(config: CourseConfig) -> list[Path]:
    """The graders' folder (the one holding the visible and hidden tests, with their conftest
    and support modules, when it lies inside the course's folder), the reference folder and
    the mistakes catalogue; each once."""
    tests = [p for p in (config.visible_tests, config.hidden_tests) if p is not None]
    common = Path(os.path.commonpath([str(p.resolve()) for p in tests]))
    root = config.root.resolve()
    graders = [common] if common != root and common.is_relative_to(root) else tests
    others = [config.course.reference_dir, config.course.mistakes]
    folders = [p.resolve() for p in [*graders, *others] if p is not None and p.is_dir()]
    return sorted(set(folders))


def _files(folder: Path) -> Iterable[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not any(part in SKIPPED for part in path.parts):
            yield path


def _add(digest, path: Path, root: Path) -> None:
    try:
        name = str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        name = str(path)
    data = path.read_bytes()
    digest.update(f"{name}\0{len(data)}\0".encode())
    digest.update(data)
