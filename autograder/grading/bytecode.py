"""A per-user bytecode cache for `autograder grade`, outside the course and the submissions.

Where bytecode writing is off (``PYTHONDONTWRITEBYTECODE``, often set to keep repositories
clean), every `autograder grade` compiled again, and pytest assertion-rewrote again, every
grader module and every module imported after torch. Inside ``bytecode_cache`` those files go to
the user's cache folder instead (platformdirs: ``$XDG_CACHE_HOME/t101-autograder/pycache`` on
Linux, ``~/.cache/...`` by default), never next to the sources: not into the course tree, not
into a learner's folder. The batch (cache_bytecode, below) keeps its own cache in DIR/.pycache.
Every command keeps this project's own modules in the per-user cache (cache_own_modules).

``sys.pycache_prefix`` also moves where Python *reads* bytecode: a library imported inside the
block is read from (and compiled once into) this cache instead of its own ``__pycache__``, so
enter the block only after the heavy imports (torch, numpy).

A cache folder that cannot be used is skipped without a word (grading then compiles in memory,
as before): one that cannot be created or written; one inside the course or a submission; one
writable by other users, who could plant bytecode that the trusted harness would run; one
outside the user's home folder, which every confined worker covers
(runtime/harness/isolation.confinement_plan), because the cache holds the compiled hidden
graders that learner code must not read.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import platformdirs

from autograder.runtime.harness import isolation

APP_NAME = "t101-autograder"
PYCACHE_DIR = ".pycache"  # in a batch's DIR: compiled (assertion-rewritten) grader modules
_KEPT: list = []  # context managers entered for the life of the process
SUBFOLDER = "pycache"


def cache_folder() -> Path:
    """The user's bytecode cache folder for this project (it may not exist yet)."""
    return platformdirs.user_cache_path(APP_NAME) / SUBFOLDER


@contextmanager
def bytecode_cache(keep_out: Iterable[Path], folder: Path | None = None) -> Iterator[Path | None]:
    """Within the block, write and read the bytecode of newly imported modules under ``folder``
    (default: cache_folder()); yields that folder, or None when the cache is not used: bytecode
    writing is already on (Python's own ``__pycache__`` folders then), or the folder is unusable
    (see the module docstring). ``keep_out``: folders the cache must not be in or contain
    (the course root, the submissions). Python's previous settings come back at the end."""
    usable = None if not sys.dont_write_bytecode else _usable(folder or cache_folder(), keep_out)
    if usable is None:
        yield None
        return
    before = sys.pycache_prefix, sys.dont_write_bytecode
    sys.pycache_prefix, sys.dont_write_bytecode = str(usable), False
    try:
        with damaged_bytecode_recompiled(usable):
            yield usable
    finally:
        sys.pycache_prefix, sys.dont_write_bytecode = before


@contextmanager
def damaged_bytecode_recompiled(folder: Path) -> Iterator[None]:
    """Within the block, a damaged .pyc under ``folder`` (a valid header, then bytes that are
    not a code object: a disk error, a truncated copy) is deleted and its module compiled from
    the source again, as a stale one is. Python itself raises "bad marshal data" for it, so one
    damaged file in a cache that outlives the command broke every later grade."""
    loader = importlib.machinery.SourceFileLoader
    own = loader.__dict__.get("get_code")
    original = loader.get_code
    root = str(folder)

    def get_code(self, fullname: str):
        return _code_or_recompiled(original, self, fullname, root)

    loader.get_code = get_code  # type: ignore[method-assign]
    try:
        yield
    finally:
        if own is None:
            del loader.get_code
        else:
            loader.get_code = own  # type: ignore[method-assign]


def cache_own_modules(package: str = "autograder", folder: Path | None = None) -> Path | None:
    """From now on, when bytecode writing is off, read and write the bytecode of ``package``'s
    submodules under ``folder`` (default: cache_folder()); return that folder, or None when
    nothing changed (bytecode writing on, the folder unusable, or already done). Only the
    package's own modules go there: torch and the other libraries keep reading their own
    ``__pycache__``. Without it, each `autograder grade` compiled about 180 of this project's
    modules from source (0.2 s of a cold grade, benchmarks/README.md)."""
    if not sys.dont_write_bytecode or any(
        isinstance(finder, _OwnModulesFinder) for finder in sys.meta_path
    ):
        return None
    usable = _usable(folder or cache_folder(), ())
    if usable is not None:
        sys.meta_path.insert(0, _OwnModulesFinder(package, str(usable)))
    return usable


class _OwnModulesFinder(importlib.abc.MetaPathFinder):
    """Finds ``package``'s submodules as the path finder does, loaded by _CachedSourceLoader."""

    def __init__(self, package: str, folder: str) -> None:
        self.prefix, self.folder = package + ".", folder

    def find_spec(self, fullname, path, target=None):  # noqa: ANN001, ANN201 (importlib's)
        if not fullname.startswith(self.prefix):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = _CachedSourceLoader(spec.loader.name, spec.loader.path)
            spec.loader.folder = self.folder
        return spec


class _CachedSourceLoader(importlib.machinery.SourceFileLoader):
    """A source loader whose bytecode is read from and written to ``folder``; a damaged file
    there is deleted and the module compiled again (damaged_bytecode_recompiled)."""

    folder = ""

    def get_code(self, fullname: str):  # noqa: ANN201 (importlib's)
        before = sys.pycache_prefix, sys.dont_write_bytecode
        sys.pycache_prefix, sys.dont_write_bytecode = self.folder, False
        try:
            original = importlib.machinery.SourceFileLoader.get_code
            return _code_or_recompiled(original, self, fullname, self.folder)
        finally:
            sys.pycache_prefix, sys.dont_write_bytecode = before


def _code_or_recompiled(get_code: Any, loader: Any, fullname: str, root: str) -> Any:
    """``get_code(loader, fullname)``; when it fails on a damaged .pyc under ``root``, that
    file is deleted and the module compiled from the source again."""
    try:
        return get_code(loader, fullname)
    except (ValueError, EOFError, ImportError):
        cached = importlib.util.cache_from_source(loader.get_filename(fullname))
        if not cached.startswith(root + os.sep) or not os.path.isfile(cached):
            raise
        os.unlink(cached)
        return get_code(loader, fullname)


def _usable(folder: Path, keep_out: Iterable[Path]) -> Path | None:
    """The folder, resolved and created (mode 0700), if this process alone may write there."""
    folder = Path(os.path.realpath(folder))
    home = Path(os.path.realpath(Path.home()))
    if str(home) in isolation.SYSTEM_DIRS or not folder.is_relative_to(home):
        return None
    for root in keep_out:
        root = Path(os.path.realpath(root))
        if folder.is_relative_to(root) or root.is_relative_to(folder):
            return None
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        status = folder.stat()
        if not stat.S_ISDIR(status.st_mode):
            return None
        if hasattr(os, "getuid") and status.st_uid != os.getuid():
            return None
        if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return None
        with tempfile.TemporaryFile(dir=folder):  # writable, also on a read-only mount
            pass
    except OSError:
        return None
    return folder


def cache_bytecode(out: Path) -> None:
    """Keep pytest's rewritten grader modules between learners. When bytecode writing is off
    (PYTHONDONTWRITEBYTECODE, often set to keep a repository clean), every learner would rewrite
    and compile every grader module again: about half of the harness's CPU time per learner.
    The cache then goes to DIR/.pycache, never into the course tree or a learner's folder."""
    if sys.dont_write_bytecode:
        sys.pycache_prefix = str(Path(out) / PYCACHE_DIR)
        sys.dont_write_bytecode = False
        # For the rest of this process: a damaged file there is compiled again, not fatal.
        _KEPT.append(damaged_bytecode_recompiled(Path(sys.pycache_prefix)))
        _KEPT[-1].__enter__()
