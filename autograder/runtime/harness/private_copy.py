"""The worker's private copy of the learner's package: regular files only, capped in size.

The copy is what the worker imports and the only folder it may write; the original submission
is never handed to it (see harness/isolation.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

MAX_PACKAGE_BYTES = 20 * 1024 * 1024
MAX_PACKAGE_FILES = 2000


class PackageTooLarge(Exception):
    """The learner's package holds more than MAX_PACKAGE_BYTES (or MAX_PACKAGE_FILES)."""


@dataclass
class PrivateCopy:
    """Where the copy went and which entries were refused, by path relative to the package."""

    base: Path
    root: Path
    refused: dict[str, str] = field(default_factory=dict)


def copy_package(package_dir: Path, package: str) -> PrivateCopy:
    """Copy the package's regular files into a fresh private temp dir (missing dir: empty root).

    Skips ``__pycache__``; a symlink is followed only if its target stays inside the package
    (else it is refused, with a reason). Raises PackageTooLarge past the size or file cap.
    """
    base = Path(tempfile.mkdtemp(prefix="autograder-")).resolve()
    root = base / "root"
    copy = PrivateCopy(base=base, root=root)
    try:
        root.mkdir()
        if package_dir.is_dir():
            _copy_tree(package_dir.resolve(), root / package, copy)
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    return copy


def _copy_tree(source: Path, target: Path, copy: PrivateCopy) -> None:
    total = 0
    files = 0
    pending = [Path()]
    target.mkdir()
    while pending:
        relative_dir = pending.pop()
        for entry in sorted(os.scandir(source / relative_dir), key=lambda e: e.name):
            relative = relative_dir / entry.name
            if entry.name == "__pycache__":
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                real = path.resolve()
                if not real.is_relative_to(source):
                    copy.refused[relative.as_posix()] = "a symbolic link to outside your package"
                    continue
                if not real.is_file():
                    copy.refused[relative.as_posix()] = "a symbolic link to a folder"
                    continue
                path = real
            if path.is_dir():
                (target / relative).mkdir()
                pending.append(relative)
            elif path.is_file():
                files += 1
                total += path.stat().st_size
                if total > MAX_PACKAGE_BYTES or files > MAX_PACKAGE_FILES:
                    raise PackageTooLarge()
                shutil.copyfile(path, target / relative, follow_symlinks=False)
