"""The manifest of protected files: what a learner should not change, with sha256 hashes.

The release writes it last (it hashes the files as written). Grading with `--manifest FILE`
compares a submission's copies against it; a changed, missing or unreadable file is reported in
results.json and the job summary. The grader never runs those copies: it always runs its own
pristine tests, so the report only tells the instructor that someone tried.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.learner_files import LinkRefused, TooLarge, read_file

MANIFEST_PATH = ".autograder/manifest.json"
FORMAT = 1

BAD_MANIFEST = (
    "The manifest {path} cannot be read: {reason}; expected the JSON file that "
    "`autograder release` writes at {expected}."
)
CHANGED = "{path} was changed (its sha256 differs from the release's)."
MISSING = "{path} was deleted or moved."
REPLACED_BY_LINK = "{path} was replaced by a symbolic link (or a folder above it was)."
#: ProtectedChange.got for a file that is, or lies under, a symbolic link (never followed).
LINK = "symbolic link"
MAX_PROTECTED_BYTES = 16 * 2**20  # a protected file is a grader or a workflow, not data


class ManifestError(ValueError):
    """The manifest file cannot be used; the message is one sentence."""


@dataclass(frozen=True)
class ProtectedChange:
    """One protected file whose content differs from the release."""

    path: str
    expected: str
    got: str  # the sha256 found, "missing", or LINK

    @property
    def sentence(self) -> str:
        template = {"missing": MISSING, LINK: REPLACED_BY_LINK}.get(self.got, CHANGED)
        return template.format(path=self.path)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render_manifest(files: dict[str, bytes], protected: list[str]) -> bytes:
    """The manifest's bytes: sorted keys, one hash per protected path, no timestamps."""
    document = {
        "format": FORMAT,
        "protected": {path: sha256(files[path]) for path in sorted(protected)},
    }
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()


def read_manifest(path: Path) -> dict[str, str]:
    """{relative path: sha256} from a manifest file; ManifestError with a sentence otherwise."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ManifestError(_bad(path, str(error))) from None
    protected = document.get("protected") if isinstance(document, dict) else None
    if document.get("format") != FORMAT or not isinstance(protected, dict):
        raise ManifestError(_bad(path, f"it is not format {FORMAT} with a 'protected' table"))
    for key, value in protected.items():
        unsafe = PurePosixPath(key).is_absolute() or ".." in PurePosixPath(key).parts
        if unsafe or not isinstance(value, str):
            raise ManifestError(_bad(path, f"the entry {key!r} is not a relative path and hash"))
    return dict(protected)


def compare_manifest(manifest: Path, root: Path) -> list[ProtectedChange]:
    """The protected files under root whose content differs from the manifest, sorted."""
    changes = []
    for relative, expected in sorted(read_manifest(manifest).items()):
        try:  # never through a link: one would show the bytes of a file outside the submission
            got = sha256(read_file(Path(root), relative, max_bytes=MAX_PROTECTED_BYTES))
        except LinkRefused:
            got = LINK
        except (OSError, TooLarge):
            got = "missing"
        if got != expected:
            changes.append(ProtectedChange(relative, expected, got))
    return changes


def _bad(path: Path, reason: str) -> str:
    return BAD_MANIFEST.format(path=path, reason=reason.rstrip("."), expected=MANIFEST_PATH)
