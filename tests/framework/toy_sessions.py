"""A LearnerSession on a toy package written from source texts, for the runtime's tests."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from autograder.runtime import LearnerSession, Limits


def toy_session(
    folder: Path, sources: Mapping[str, str], *, limits: Limits | None = None, **options: Any
) -> Iterator[LearnerSession]:
    """Write each {file name: source} (dedented) into folder/toypkg, then yield a session on
    that package (`options`: LearnerSession's), closed afterwards: a fixture's body."""
    package_dir = folder / "toypkg"
    package_dir.mkdir(parents=True)
    for name, source in sources.items():
        (package_dir / name).write_text(textwrap.dedent(source))
    limits = limits or Limits(test_timeout=30, import_timeout=30)
    made = LearnerSession(package_dir, package="toypkg", limits=limits, **options)
    try:
        yield made
    finally:
        made.close()
