"""The worker's private copy of the learner's package.

Regular files only, read through no link, capped in size, and no compiled module (bytecode, an
extension): Python would import one as it imports a source file, and the static check, which
reads only sources, could not see what it calls.

The copy is what the worker imports and the only folder it may write; the original submission
is never handed to it (see harness/isolation.py).
"""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder import learner_files
from autograder.runtime.shared.confinement import FILES_PER_MB

MAX_PACKAGE_BYTES = 20 * 1024 * 1024
MAX_PACKAGE_FILES = 2000
#: Endings of the files Python imports as compiled code (".pyc", ".cpython-311-...so", ".so").
COMPILED_SUFFIXES = tuple(
    {*importlib.machinery.BYTECODE_SUFFIXES, *importlib.machinery.EXTENSION_SUFFIXES, ".pyd"}
)
#: Why a compiled module is left out (the learner's import error names it).
COMPILED = (
    "compiled code (bytecode or an extension module), which the grader cannot read: submit "
    "its .py source"
)


class PackageTooLarge(Exception):
    """The learner's package holds more than MAX_PACKAGE_BYTES (or MAX_PACKAGE_FILES)."""


@dataclass
class PrivateCopy:
    """Where the copy went and which entries were refused, by path relative to the package."""

    base: Path
    root: Path
    refused: dict[str, str] = field(default_factory=dict)


def over_disk_quota(folder: Path, disk_mb: int) -> bool:
    """Whether everything under ``folder`` (links not followed) takes more than ``disk_mb`` MiB
    on disk or more than ``disk_mb`` * FILES_PER_MB entries; the count stops there (learner
    code may have made millions). A ``disk_mb`` of 0 is no quota."""
    if disk_mb <= 0:
        return False
    max_entries, max_bytes = disk_mb * FILES_PER_MB, disk_mb * 2**20
    used, entries, pending = 0, 0, [str(folder)]
    while pending and entries <= max_entries:
        try:
            with os.scandir(pending.pop()) as listing:
                for entry in listing:
                    entries += 1
                    try:
                        used += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
        except OSError:
            continue
    return used > max_bytes or entries > max_entries


def copy_package(package_dir: Path, package: str) -> PrivateCopy:
    """Copy the package's regular files into a fresh private temp dir (missing dir: empty root),
    as read_package reads them. Raises PackageTooLarge past the size or file cap, and
    learner_files.LinkRefused when a part of ``package_dir`` has become a link."""
    base = Path(tempfile.mkdtemp(prefix="autograder-")).resolve()
    root = base / "root"
    copy = PrivateCopy(base=base, root=root)
    try:
        root.mkdir()
        tree = read_package(package_dir)
        if tree is not None:
            learner_files.write_tree(tree, root / package)
            copy.refused = tree.refused
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    return copy


def read_package(package_dir: Path) -> learner_files.Tree | None:
    """The package's folders and regular files, read through descriptors without following
    links (autograder/learner_files.py): a link inside the package to one of its own files is
    read as that file, any other is refused with a reason, as is a compiled module
    (COMPILED); ``__pycache__`` is skipped. None when there is no such folder. ``package_dir``
    is the harness's real path of the folder: learner_files.LinkRefused when a part of it has
    become a link since. Raises PackageTooLarge past MAX_PACKAGE_BYTES or MAX_PACKAGE_FILES."""
    home = Path(os.path.abspath(package_dir))
    try:
        folder = learner_files.open_real_folder(home)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        tree = learner_files.read_tree(
            folder,
            max_bytes=MAX_PACKAGE_BYTES,
            max_files=MAX_PACKAGE_FILES,
            skip=frozenset({"__pycache__"}),
            home=home,
        )
    except learner_files.TooLarge:
        raise PackageTooLarge() from None
    finally:
        os.close(folder)
    return _without_compiled(tree)


def _without_compiled(tree: learner_files.Tree) -> learner_files.Tree:
    """The tree with each compiled module (COMPILED_SUFFIXES) moved from its files to the
    entries refused, as COMPILED."""
    for relative in [name for name in tree.files if name.endswith(COMPILED_SUFFIXES)]:
        del tree.files[relative]
        tree.refused[relative] = COMPILED
    return tree
