"""Reading a learner's files without following a link out of the submission.

Everything the harness reads of a submission (its package folder, the private copy a worker
imports, the source the static check reads, a protected file's digest, a notebook) goes
through here. Every folder and file below the submission's root is opened with ``O_NOFOLLOW``
relative to the folder above it (``openat``), never by a path string: a symbolic link swapped
in between a check and a read is refused by the kernel at the read, not followed.

- The submission root is followed as given. Below it, a folder or file on the way to what is
  read that is a link raises LinkRefused (its sentence, LINK_REFUSED, names link and target).
- ``read_tree``: inside the package, a link to one of the package's own regular files is read
  as that file; any other link, and any FIFO, socket or device, is left out with a reason.

Design: docs/internals/runtime.md#reading-a-submission; the rules, entry by entry:
docs/operations/security.md#reading-a-submission-no-link-is-followed.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20

LINK_REFUSED = (
    "{path} is a symbolic link (to {target}); the grader never follows a link in a "
    "submission, so nothing was read through it: put the folder or file itself at that path."
)
#: Why an entry inside the package was left out of what is graded (the learner's report says it).
LINK_OUTSIDE = "a symbolic link to outside your package"
LINK_TO_FOLDER = "a symbolic link to a folder"
LINK_TO_LINK = "a symbolic link to another symbolic link"
LINK_BROKEN = "a symbolic link to nothing"
NOT_REGULAR = "not a regular file or folder (a pipe, socket or device)"
CHANGED = "changed while it was being read"


class LinkRefused(OSError):
    """A folder or file on the way to what was asked for is a symbolic link.

    Attributes:
        path: the link as the submission names it (relative to its root, POSIX).
        target: what the link points to, as written in it.
        sentence: LINK_REFUSED for them, one sentence for the learner's report.
    """

    def __init__(self, path: str, target: str) -> None:
        self.path, self.target = path, target
        self.sentence = LINK_REFUSED.format(path=path, target=shown(target))
        super().__init__(errno.ELOOP, self.sentence)

    def __str__(self) -> str:
        return self.sentence


class TooLarge(Exception):
    """More bytes or files than the caller allows."""


def shown(text: str) -> str:
    """A name or link target on one line: control characters as escapes (``\\n``, ``\\x1b``)."""
    out = []
    for char in text:
        if char.isprintable() or char == " ":
            out.append(char)
        else:
            out.append(repr(char)[1:-1] if char != "\\" else char)
    return "".join(out)


def open_folder(root: Path, relative: PurePosixPath | str = ".", *, shown_as: str = "") -> int:
    """A descriptor of the folder ``root/relative``, no part below ``root`` followed if a link.

    ``root`` itself is opened as given (links in it followed). Raises LinkRefused naming the
    first link by its path below ``root`` (after ``shown_as``), FileNotFoundError or
    NotADirectoryError. The caller closes the descriptor.
    """
    parts = list(_parts(relative))
    fd = os.open(root, _DIR_FLAGS & ~os.O_NOFOLLOW)
    for done, part in parts:
        fd = _step(fd, part, f"{shown_as}{done}")
    return fd


def open_real_folder(path: Path) -> int:
    """A descriptor of the folder at ``path``, an absolute path none of whose parts may be a
    link: the harness's own real path of a package folder, opened again later (a worker's
    copy) without trusting that nobody replaced a part of it by a link meanwhile."""
    path = Path(path)
    if not path.is_absolute():
        raise ValueError(f"open_real_folder needs an absolute path, got {path}")
    return open_folder(Path(path.anchor), PurePosixPath(*path.parts[1:]), shown_as="/")


def _parts(relative: PurePosixPath | str) -> Iterator[tuple[str, str]]:
    done: list[str] = []
    for part in PurePosixPath(relative).parts:
        if part in (".", ""):
            continue
        if part == ".." or "/" in part:
            raise ValueError(f"{relative} is not a path below the folder")
        done.append(part)
        yield "/".join(done), part


def _step(fd: int, part: str, shown_path: str) -> int:
    """Open the folder ``part`` of the folder ``fd`` (closed here), refusing a link."""
    try:
        child = os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            target = _link_target(fd, part)
            if target is not None:
                raise LinkRefused(shown_path, target) from None
        raise
    finally:
        os.close(fd)
    return child


def _link_target(fd: int, name: str) -> str | None:
    try:
        return os.readlink(name, dir_fd=fd)
    except OSError:
        return None


def read_file(root: Path, relative: PurePosixPath | str, *, max_bytes: int) -> bytes:
    """The bytes of the regular file ``root/relative``, no part below ``root`` followed.

    Raises LinkRefused, FileNotFoundError, IsADirectoryError, TooLarge past ``max_bytes``,
    or OSError(EINVAL) for a pipe, socket or device.
    """
    relative = PurePosixPath(relative)
    folder = open_folder(root, relative.parent)
    try:
        return _read_regular(folder, relative.name, max_bytes, str(relative))
    finally:
        os.close(folder)


def _read_regular(folder: int, name: str, max_bytes: int, shown_path: str) -> bytes:
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=folder)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise LinkRefused(shown_path, _link_target(folder, name) or "?") from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a folder", shown_path)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, shown_path)
        if info.st_size > max_bytes:
            raise TooLarge(shown_path)
        chunks, size = [], 0
        while chunk := os.read(fd, _CHUNK):
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(shown_path)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@dataclass
class Tree:
    """A package folder read without following links: its folders and its regular files'
    bytes by POSIX path relative to it, and the entries left out with why (LINK_OUTSIDE,
    NOT_REGULAR, ...)."""

    files: dict[str, bytes] = field(default_factory=dict)
    folders: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


@dataclass
class _Walk:
    root: int  # the package folder's descriptor (links inside are resolved from it)
    home: str  # its absolute path, for a link written as one ("" when unknown)
    skip: frozenset[str]
    bytes_left: int
    entries_left: int
    tree: Tree = field(default_factory=Tree)


def read_tree(
    folder: int,
    *,
    max_bytes: int,
    max_files: int,
    skip: frozenset[str] = frozenset(),
    home: Path | None = None,
) -> Tree:
    """Every folder and regular file under the open folder ``folder`` (not closed here),
    read through descriptors. ``home``: the folder's absolute path, so that a link written as
    an absolute path into the folder counts as inside (it is still opened from ``folder``).
    Names in ``skip`` (``__pycache__``) are left out silently; folders more than MAX_DEPTH deep
    are left out with why. Raises TooLarge past ``max_bytes`` in all, or ``max_files`` files
    and folders."""
    walk = _Walk(folder, str(home or ""), skip, max_bytes, max_files)
    _read_folder(os.dup(folder), "", walk, 0)
    return walk.tree


MAX_DEPTH = 32  # folders inside folders: a package is a few levels deep
TOO_DEEP = f"a folder nested more than {MAX_DEPTH} folders deep"


def _read_folder(fd: int, prefix: str, walk: _Walk, depth: int) -> None:
    try:
        with os.scandir(fd) as scan:
            entries = sorted(scan, key=lambda e: e.name)
        for entry in entries:
            if entry.name in walk.skip:
                continue
            relative = f"{prefix}{entry.name}"
            _count(walk, relative, 0)
            try:
                kind = entry.stat(follow_symlinks=False).st_mode
            except OSError:  # removed since it was listed: there is nothing to read
                continue
            if stat.S_ISDIR(kind) and depth >= MAX_DEPTH:
                walk.tree.refused[relative] = TOO_DEEP
            elif stat.S_ISDIR(kind):
                try:
                    child = _step(os.dup(fd), entry.name, relative)
                except OSError:  # replaced by a link or removed since it was listed
                    walk.tree.refused[relative] = CHANGED
                    continue
                walk.tree.folders.append(relative)
                _read_folder(child, f"{relative}/", walk, depth + 1)
            elif stat.S_ISREG(kind):
                _read_into(walk, fd, entry.name, relative, CHANGED)
            elif stat.S_ISLNK(kind):
                _read_link(walk, fd, entry.name, relative)
            else:
                walk.tree.refused[relative] = NOT_REGULAR
    finally:
        os.close(fd)


def _count(walk: _Walk, relative: str, size: int) -> None:
    walk.bytes_left -= size
    walk.entries_left -= 0 if size else 1
    if walk.bytes_left < 0 or walk.entries_left < 0:
        raise TooLarge(relative)


def _read_into(walk: _Walk, folder: int, name: str, relative: str, gone: str) -> None:
    """Read the regular file ``name`` of ``folder`` as ``relative``; anything else that is
    there by the time it is opened is left out: as ``gone`` (or NOT_REGULAR, LINK_TO_LINK,
    LINK_TO_FOLDER)."""
    try:
        data = _read_regular(folder, name, walk.bytes_left, relative)
    except TooLarge:
        raise TooLarge(relative) from None
    except LinkRefused:
        walk.tree.refused[relative] = CHANGED if gone == CHANGED else LINK_TO_LINK
        return
    except IsADirectoryError:
        walk.tree.refused[relative] = CHANGED if gone == CHANGED else LINK_TO_FOLDER
        return
    except OSError as error:
        walk.tree.refused[relative] = NOT_REGULAR if error.errno == errno.EINVAL else gone
        return
    _count(walk, relative, len(data))
    walk.tree.files[relative] = data


def _read_link(walk: _Walk, fd: int, name: str, relative: str) -> None:
    """A link inside the package: copied as the file it names when that is a regular file of
    the package reached without another link; otherwise left out with why."""
    target = _link_target(fd, name)
    if target is None:
        walk.tree.refused[relative] = CHANGED
        return
    if posixpath.isabs(target):
        target = posixpath.normpath(target)
        if not (walk.home and (target + "/").startswith(walk.home.rstrip("/") + "/")):
            walk.tree.refused[relative] = LINK_OUTSIDE
            return
        inside = posixpath.relpath(target, walk.home)
    else:
        inside = posixpath.normpath(posixpath.join(posixpath.dirname(relative), target))
    if inside == ".." or inside.startswith("../"):
        walk.tree.refused[relative] = LINK_OUTSIDE
        return
    try:
        folder = open_folder_fd(walk.root, posixpath.dirname(inside))
    except LinkRefused:
        walk.tree.refused[relative] = LINK_TO_LINK
        return
    except OSError:
        walk.tree.refused[relative] = LINK_BROKEN
        return
    try:
        _read_into(walk, folder, posixpath.basename(inside), relative, LINK_BROKEN)
    finally:
        os.close(folder)


def open_folder_fd(folder: int, relative: str) -> int:
    """As open_folder, from an open folder descriptor (not closed here)."""
    parts = list(_parts(relative))
    fd = os.dup(folder)
    for done, part in parts:
        fd = _step(fd, part, done)
    return fd


def write_tree(tree: Tree, target: Path) -> None:
    """Write a Tree's folders and files under ``target`` (created; must not exist)."""
    target.mkdir()
    for folder in tree.folders:
        (target / folder).mkdir()
    for relative, data in tree.files.items():
        (target / relative).write_bytes(data)


def find_folders(root: Path, name: str, depth: int) -> list[Path]:
    """Folders named ``name`` holding an ``__init__.py`` file within ``depth`` levels below
    ``root`` (``.git`` skipped), found without following any link."""
    found: list[Path] = []
    level = [(Path(root), PurePosixPath())]
    for _ in range(depth):
        below = []
        for folder, relative in level:
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name == ".git" or not entry.is_dir(follow_symlinks=False):
                    continue
                path = Path(entry.path)
                init = path / "__init__.py"
                if entry.name == name and init.is_file() and not init.is_symlink():
                    found.append(path)
                below.append((path, relative / entry.name))
        level = below
    return found
