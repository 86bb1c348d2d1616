"""The scheduled hidden grading's gradebook, kept on a branch of the instructor's repository.

* ``restore``: the branch's files into a folder (an empty folder when the branch does not exist
  yet: the first run); returns the commit restored ("" for none).
* ``save``: the folder's files as one commit on top of that commit (nothing when they are the
  same), pushed; git refuses the push if another run saved meanwhile. Top-level dot entries
  (DIR/.repos, .pycache, .partial, .lock, .session.log) are never kept. The checkout itself is
  not touched (a separate index).
* GRADEBOOK_TOKEN authenticates git through an ``http.extraheader`` in git's environment
  (GIT_CONFIG_COUNT), never on a command line or in a file.

Design (why a branch): docs/internals/gradebook.md#the-gradebook-branch.
"""

from __future__ import annotations

import base64
import io
import os
import subprocess
import tarfile
import tempfile
from pathlib import Path

STATE_REF = "refs/t101/gradebook"  # where the branch's commit is fetched to, in the checkout
AUTHOR = ("t101-autograder", "t101-autograder@users.noreply.github.com")
KEPT_OUT = (":(exclude).*",)  # pathspec: every top-level dot entry of the folder
GIT_FAILED = "git {what} failed ({detail})."
MOVED_MEANWHILE = (
    "The branch {branch} moved since this run restored it (another run saved its gradebook "
    "meanwhile), so this run's gradebook was not pushed; the next run grades from the newer one."
)


class BranchError(Exception):
    """The branch could not be read or written; the message is one sentence."""


def restore(branch: str, into: Path, *, repo: Path = Path("."), remote: str = "origin") -> str:
    """The files of ``branch`` of ``remote`` into ``into`` (made empty first if missing); the
    commit restored, or "" when the branch does not exist yet."""
    into = Path(into)
    into.mkdir(parents=True, exist_ok=True)
    heads = _git(repo, "ls-remote", "--exit-code", "--heads", remote, f"refs/heads/{branch}",
                 what=f"ls-remote {remote}", allowed=(2,))  # fmt: skip
    if not heads:
        return ""
    refspec = f"+refs/heads/{branch}:{STATE_REF}"
    _git(repo, "fetch", "--quiet", "--no-tags", "--depth=1", remote, refspec, what="fetch")
    commit = _git(repo, "rev-parse", "--verify", f"{STATE_REF}^{{commit}}", what="rev-parse")
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit],
        capture_output=True,
        check=False,
        env=_env(),
    )
    if archive.returncode != 0:
        raise BranchError(GIT_FAILED.format(what="archive", detail=_said(archive.stderr)))
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return commit


def save(
    branch: str,
    source: Path,
    *,
    base: str,
    message: str,
    repo: Path = Path("."),
    remote: str = "origin",
) -> str:
    """Commit ``source``'s files on top of ``base`` (the commit restore gave, "" for none) and
    push it to ``branch``; the new commit, or "" when nothing changed. BranchError when the
    branch moved since ``base``."""
    with tempfile.TemporaryDirectory(prefix="t101-gradebook-index-") as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        work = ["--work-tree", str(Path(source).resolve())]
        _git(repo, *work, "add", "--all", "--force", "--", ".", *KEPT_OUT, what="add", env=index)
        tree = _git(repo, "write-tree", what="write-tree", env=index)
    if base and _git(repo, "rev-parse", f"{base}^{{tree}}", what="rev-parse") == tree:
        return ""
    parents = ["-p", base] if base else []
    commit = _git(repo, "commit-tree", tree, *parents, "-m", message, what="commit-tree")
    pushed = subprocess.run(
        ["git", "-C", str(repo), "push", "--quiet", remote, f"{commit}:refs/heads/{branch}"],
        capture_output=True,
        text=True,
        check=False,
        env=_env(),
    )
    if pushed.returncode != 0:
        if "rejected" in pushed.stderr or "fetch first" in pushed.stderr:
            raise BranchError(MOVED_MEANWHILE.format(branch=branch))
        raise BranchError(GIT_FAILED.format(what="push", detail=_said(pushed.stderr)))
    return commit


def _git(
    repo: Path,
    *args: str,
    what: str,
    env: dict[str, str] | None = None,
    allowed: tuple[int, ...] = (),
) -> str:
    """git ARGS in repo; its output, stripped ("" for an allowed failure status)."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**_env(), **(env or {})},
    )
    if done.returncode in allowed:
        return ""
    if done.returncode != 0:
        raise BranchError(GIT_FAILED.format(what=what, detail=_said(done.stderr)))
    return done.stdout.strip()


def _env() -> dict[str, str]:
    """git's environment: a fixed identity for the commit, and the token, when given, as an
    extra header of git's own configuration (not a command line's)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": AUTHOR[0],
        "GIT_AUTHOR_EMAIL": AUTHOR[1],
        "GIT_COMMITTER_NAME": AUTHOR[0],
        "GIT_COMMITTER_EMAIL": AUTHOR[1],
        "GIT_TERMINAL_PROMPT": "0",
    }
    token = env.pop("GRADEBOOK_TOKEN", "")
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env.update(
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0="http.extraheader",
            GIT_CONFIG_VALUE_0=f"AUTHORIZATION: basic {basic}",
        )
    return env


def _said(stderr: bytes | str) -> str:
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
