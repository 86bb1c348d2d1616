"""What `autograder publish` already sent for a learner: DIR/<learner>/published.json.

It lives in the learner's folder, beside record.json, so it goes wherever the folder goes and
is gone as soon as the learner is graded again (then they are published again). It holds the
status sent (commit, state, description, context), when, the pull-request comments made
(``"owner/name#12"`` to the comment's id) and, after a failure that will not go away by itself
(404, 403, 422), its sentence (``failed``).

Design: docs/internals/gradebook.md#what-publish-already-sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autograder.atomic_files import atomic_write_text
from autograder.gradebook import store

PUBLISHED_FILE = "published.json"


def read_published(out: Path, learner: str) -> dict[str, Any]:
    """The learner's published.json ({} when none or unreadable)."""
    try:
        data = json.loads((store.learner_dir(out, learner) / PUBLISHED_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_published(out: Path, learner: str, data: dict[str, Any]) -> None:
    """Replace the learner's published.json (atomically), when their folder exists."""
    folder = store.learner_dir(out, learner)
    if folder.is_dir():
        atomic_write_text(
            folder / PUBLISHED_FILE, json.dumps(data, indent=2, sort_keys=True) + "\n"
        )


def unpublished(out: Path) -> list[str]:
    """The learners of DIR whose row names a commit that publish has not handled yet: no
    published.json for that commit (neither sent nor failed for good)."""
    return [
        record.learner
        for record in store.read_records(out)
        if record.commit and read_published(out, record.learner).get("commit") != record.commit
    ]
