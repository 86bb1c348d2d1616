"""Tamper flags of a learner's row: files of the release a learner changed.

`tampered_files` compares the learner's copy of the visible tests with the pristine ones (the
batch grades with the pristine tests whatever the copy says); `protected_tamper` adds what the
release manifest's protected files show (results.json lists each change).
"""

from __future__ import annotations

import os
from pathlib import Path

from autograder import learner_files

MAX_TESTS_BYTES = 64 * 2**20  # a learner's copy of the visible tests, compared byte by byte
MISSING_LIST_LIMIT = 5  # more protected files missing than this: one sentence, not a list
MANY_MISSING = (
    "{missing} of {total} protected files missing, each listed in {learner}/results.json (not "
    "a clone of the release?)"
)


def protected_tamper(
    changes: list[dict], tamper: list[str], *, total: int, learner: str
) -> list[str]:
    """The tamper entries that the release manifest's changes add to ``tamper`` (the visible
    tests' own): "changed PATH" and "missing PATH" for each protected file not already there;
    more than MISSING_LIST_LIMIT missing files become one MANY_MISSING sentence (a repository
    that is not a clone of the release misses them all; results.json lists them)."""
    known = {entry.split(" ", 1)[1] for entry in tamper}
    fresh = [c for c in changes if c["path"] not in known]
    missing = sum(c["got"] == "missing" for c in fresh)
    listed = missing <= MISSING_LIST_LIMIT
    entries = [
        f"{'missing' if c['got'] == 'missing' else 'changed'} {c['path']}"
        for c in fresh
        if listed or c["got"] != "missing"
    ]
    if not listed:
        entries.append(MANY_MISSING.format(missing=missing, total=total, learner=learner))
    return entries


def tampered_files(pristine: Path, course_root: Path, repo: Path) -> list[str]:
    """Files of the learner's copy of the visible tests that differ from the pristine ones, and
    Python files there that the course does not have (a conftest.py, say); a link there counts
    as changed (it is read through no link: learner_files). Missing files are not tampering:
    the batch run always uses the pristine tests."""
    try:
        relative = pristine.resolve().relative_to(course_root.resolve())
    except ValueError:
        return []
    try:
        folder = learner_files.open_folder(repo, relative.as_posix())
    except learner_files.LinkRefused:
        return [f"changed {relative} (a symbolic link)"]
    except OSError:
        return []
    try:
        theirs = learner_files.read_tree(
            folder, max_bytes=MAX_TESTS_BYTES, max_files=10_000, skip=frozenset({"__pycache__"})
        )
    except learner_files.TooLarge:
        return [f"changed {relative} (too large to compare)"]
    finally:
        os.close(folder)
    changed = [f"changed {relative / name} ({why})" for name, why in sorted(theirs.refused.items())]
    for name, data in sorted(theirs.files.items()):
        ours = pristine / name
        if ours.is_file():
            if ours.read_bytes() != data:
                changed.append(f"changed {relative / name}")
        elif name.endswith(".py") or Path(name).name in {"pytest.ini", "conftest.py"}:
            changed.append(f"added {relative / name}")
    return changed
