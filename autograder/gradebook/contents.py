"""Digests of what a grade depends on besides the options: the course's files and the manifest.

A rerun keeps a batch's records, and merge combines shards, only when they were graded the same
way (settings.run_settings). So the settings hold a digest of the course's files (course.toml,
the graders, the references and the catalogue of mistakes) and of the manifest's bytes (two
copies of one manifest are the same setting, wherever they lie).

Design: docs/internals/gradebook.md#the-course-digests.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from autograder.config import CourseConfig

SKIPPED = ("__pycache__",)  # compiled files follow the sources; their bytes differ by machine


#: The parts of a course whose files a grade depends on, as a refusal names them.
COURSE_PARTS = ("course.toml", "graders", "references", "mistakes catalogue")


def course_parts(config: CourseConfig) -> dict[str, str]:
    """sha256 (hex) of each of COURSE_PARTS: course.toml, and every file of the grader folders,
    the reference folder and the mistakes catalogue, by its path relative to the course's
    folder ("" for a part the course does not have)."""
    folders = dict(zip(COURSE_PARTS[1:], _folders(config), strict=True))
    parts = {"course.toml": _digest_of([config.path], config.root)}
    for name, found in folders.items():
        files = [path for folder in found for path in _files(folder)]
        parts[name] = _digest_of(files, config.root) if found else ""
    return parts


def course_digest(parts: dict[str, str]) -> str:
    """One digest of course_parts' digests."""
    text = "\0".join(f"{name}={parts.get(name, '')}" for name in COURSE_PARTS)
    return hashlib.sha256(text.encode()).hexdigest()


def _digest_of(files: Iterable[Path], root: Path) -> str:
    digest = hashlib.sha256()
    for path in files:
        _add(digest, path, root)
    return digest.hexdigest()


def file_digest(path: Path | None) -> str:
    """sha256 (hex) of the file's bytes; "" for none."""
    if path is None:
        return ""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _folders(config: CourseConfig) -> list[list[Path]]:
    """The folders of the graders (the one holding the visible and hidden tests, with their
    conftest and support modules, when it lies inside the course's folder; else those two),
    of the references and of the mistakes catalogue; those that exist."""
    tests = [p for p in (config.visible_tests, config.hidden_tests) if p is not None]
    common = Path(os.path.commonpath([str(p.resolve()) for p in tests]))
    root = config.root.resolve()
    graders = [common] if common != root and common.is_relative_to(root) else tests
    others = [[config.course.reference_dir], [config.course.mistakes]]
    return [
        sorted({p.resolve() for p in group if p is not None and p.is_dir()})
        for group in [graders, *others]
    ]


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
