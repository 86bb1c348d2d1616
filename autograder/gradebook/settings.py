"""The settings a batch run grades with, and their digests.

`JobSettings` is what every learner of one run shares (picklable: paths and plain values). Its
digests decide what a rerun keeps: `settings_key` is what a learner's record must match to be
reused, `run_settings` what shards merged into one gradebook must share (merge.py),
`instant_settings` the same with the deadline as an instant, and `shared_options` the parts as
a person reads them (DIR/run.json keeps them, so that a refusal can say what differs).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

from autograder.gradebook import snapshot
from autograder.gradebook.roster import Learner


@dataclass(frozen=True)
class JobSettings:
    """What every job of one batch run shares (picklable: paths and plain values)."""

    course: Path
    out: Path
    deadline: str | None
    test_timeout: float | None
    seed: int
    run_id: str
    parent_pid: int
    manifest: Path | None = None  # a release manifest: its protected-file changes are tamper
    shard: str = ""  # "i/n" of --shard, "" for the whole roster
    # sha256 of the course's files and of the manifest's bytes (gradebook/contents.py), taken
    # once by the command; "" when not taken (autograder check, whose records are not reused)
    course_digest: str = ""
    manifest_digest: str = ""
    # contents.course_parts: each part's digest, so that a refusal can say which one changed
    course_parts: tuple[tuple[str, str], ...] = ()


def run_settings(settings: JobSettings) -> str:
    """The settings every learner of a run shares, as a short digest: shards merged into one
    gradebook must have been graded with the same ones (merge.py)."""
    return _digest(_shared(settings))


def instant_settings(settings: JobSettings) -> str:
    """run_settings with the deadline as the instant it names, in UTC: the shards of one run
    whose deadline was written in other words (+05:30 and Z) share it, so merge.py merges
    them (their run_settings differ, and stay as they were for the outputs already written)."""
    parts = _shared(settings)
    if settings.deadline:
        parts[0] = snapshot.parse_deadline(settings.deadline).astimezone(UTC).isoformat()
    return _digest(parts)


def shared_options(settings: JobSettings) -> dict[str, str]:
    """What _shared's parts come from, by option, as a person reads them (DIR/run.json keeps
    them, so that a rerun with other settings can be told what differs: changed_settings.py).
    The manifest is named with the start of its digest, each part of the course by its own
    (contents.COURSE_PARTS)."""
    return {
        "--deadline": settings.deadline or "",
        "--timeout": str(settings.test_timeout),
        "--seed": str(settings.seed),
        "--manifest": _with_digest(settings.manifest, settings.manifest_digest),
        "--course": str(settings.course),
        **{name: digest[:12] for name, digest in settings.course_parts},
    }


def _with_digest(path: Path | None, digest: str) -> str:
    if path is None:
        return ""
    return f"{path} (contents {digest[:12]})" if digest else str(path)


def _shared(settings: JobSettings) -> list[str]:
    """What grading every learner of a run depends on: the options, and the contents of the
    course and the manifest (not their paths: a copy elsewhere is the same setting). A
    record whose key no longer matches is graded again, or refused (changed_settings.py)."""
    return [
        settings.deadline or "",
        str(settings.test_timeout),
        str(settings.seed),
        settings.manifest_digest if settings.manifest else "",
        settings.course_digest,
    ]


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def settings_key(settings: JobSettings, learner: Learner) -> str:
    """What a finished record must match to be reused by a resumed run."""
    parts = [str(learner.repo), *_shared(settings)]
    if learner.extension_days:  # another extension regrades that learner (late.py)
        parts.append(f"extension_days {learner.extension_days}")
    if learner.url:  # its copy's path stays the same when the roster gives another URL
        parts.append(learner.url)
    return _digest(parts)
