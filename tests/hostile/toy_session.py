"""A learner session on a one-module toy package, for hostile tests of the runtime alone."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from autograder.runtime import LearnerSession, Limits, RemoteModule


@contextmanager
def toy_module(tmp_path: Path, source: str, name: str = "layers") -> Iterator[RemoteModule]:
    """`toypkg.<name>` holding `source` (dedented), imported in a worker of its own session
    (``module._session``), closed after."""
    package = tmp_path / "toypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / f"{name}.py").write_text(textwrap.dedent(source))
    session = LearnerSession(
        package,
        package="toypkg",
        limits=Limits(test_timeout=5.0, import_timeout=20, memory_mb=2048),
        display_dir="assignments/toypkg",
    )
    try:
        yield session.module(name)
    finally:
        session.close()
