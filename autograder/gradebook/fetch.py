"""Learner repositories given by clone URL, copied to this machine before they are graded.

A roster CSV may give a learner's repository as a clone URL, the way GitHub Classroom lists
them: ``https://`` (or ``http://``), ``ssh://``, ``git://``, or scp-like ``user@host:path``.
Such a learner's repository is a bare copy in DIR/.repos/<learner>.git, which is then graded
exactly as a local clone (its HEAD, or its last commit at the deadline; snapshot.py).

* ``locate`` gives those learners their copy's path before anything is fetched: the path is
  part of the key a resumed run compares (job.settings_key), so a learner already graded is
  not fetched again.
* URLs are shown (rows, console) without a password or token written into them (``shown``).
* ``fetch`` brings the copies of the learners still to grade up to date, several at a time:
  ``git clone --bare`` into DIR/.repos/.partial, then a rename (a killed run leaves no half
  copy); a copy already there is updated (``git fetch --prune``, every branch). A clone that
  fails gives that learner a row with git's own last line, and the run goes on; an update that
  fails keeps the copy as it was fetched before, says so on the console, and grades it (the
  gradebook's commit column says what was graded).

git runs with the user's own configuration (credential helpers, URL rewrites, ssh keys reach
private repositories) but never prompts: no terminal, ssh in batch mode, so a repository the
machine has no credentials for fails at once instead of waiting for a password. Only the https,
http, ssh and git transports are allowed (GIT_ALLOW_PROTOCOL; never ``ext::``, which runs a
command), and the URL comes after ``--``, so a roster line cannot pass git an option.
Source: the git documentation, git-clone(1), git-fetch(1) and git(1) (GIT_ALLOW_PROTOCOL).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from autograder.gradebook.roster import Learner

REPOS_DIR = ".repos"  # in DIR: the bare copies of repositories given by URL
PARTIAL_DIR = ".partial"  # in DIR/.repos: clones being made, renamed into place when done
FETCH_TIMEOUT = 600.0  # seconds for one repository's clone or update
FETCH_JOBS = 8  # repositories fetched at once (network-bound, not CPU-bound)
ALLOWED_PROTOCOLS = "https:http:ssh:git"

CLONE_FAILED = "git could not clone {url}: {detail}."
TOO_SLOW = "git took longer than {seconds:.0f} s to {action} {url}"
NOT_UPDATED = (
    "Could not update the copy of {url} for {learner} ({detail}); grading the copy fetched "
    "before (its HEAD is {commit})."
)

#: One line for the console (a copy that could not be updated); quiet mode drops it.
Say = Callable[[str], None]


def copy_path(out: Path, learner_id: str) -> Path:
    """Where the repository of a learner given by URL is copied: DIR/.repos/<learner>.git."""
    return Path(out) / REPOS_DIR / f"{learner_id}.git"


def locate(learners: list[Learner], out: Path) -> list[Learner]:
    """The learners, each one given by URL with its copy's path as its repository."""
    return [
        replace(learner, repo=copy_path(out, learner.id)) if learner.url else learner
        for learner in learners
    ]


def fetch(
    learners: list[Learner],
    out: Path,
    say: Say,
    done: Callable[[Learner], None] = lambda learner: None,
    jobs: int = FETCH_JOBS,
) -> list[Learner]:
    """The learners, with the copies of those given by URL cloned or updated; a learner whose
    clone failed has no repository and the sentence why (a row with that error). ``done`` is
    called (from a worker thread) as each repository is done, for a progress bar."""
    wanted = [learner for learner in learners if learner.url]
    if not wanted:
        return learners
    partial = Path(out) / REPOS_DIR / PARTIAL_DIR
    shutil.rmtree(partial, ignore_errors=True)  # clones a killed run left half made
    partial.mkdir(parents=True)

    def bring(learner: Learner) -> Learner:
        brought = _bring(learner, out, say)
        done(brought)
        return brought

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(wanted)))) as pool:
        brought = dict(zip(wanted, pool.map(bring, wanted), strict=True))
    return [brought.get(learner, learner) for learner in learners]


def shown(url: str, text: str | None = None) -> str:
    """``text`` (default: the URL itself) as it may be shown in a gradebook or on a console:
    the user part of an https or http URL, where a token goes (https://TOKEN@host/... or
    https://user:TOKEN@host/...), replaced by ***, and control characters (a server's message
    may carry terminal escapes) dropped."""
    text = url if text is None else text
    parts = urlsplit(url) if "://" in url else None
    if parts and parts.scheme.lower() in ("https", "http") and "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        text = text.replace(userinfo + "@", "***@")
        secret = parts.password or parts.username  # a lone user part is a token
        if secret:
            text = text.replace(secret, "***")  # git may quote it apart from the URL
    return "".join(ch for ch in text if ch.isprintable())


def _bring(learner: Learner, out: Path, say: Say) -> Learner:
    url = shown(learner.url)
    copy = copy_path(out, learner.id)
    if copy.is_dir() and _read(copy, "config", "--get", "remote.origin.url") == learner.url:
        failure = _run(["-C", str(copy), "fetch", "--quiet", "--prune", "origin", *_BRANCHES])
        if failure is None:
            return learner
        if failure == _TIMED_OUT:
            failure = TOO_SLOW.format(seconds=FETCH_TIMEOUT, action="update", url=url)
        detail = shown(learner.url, failure)
        commit = _read(copy, "rev-parse", "--verify", "--quiet", "HEAD") or "none"
        say(NOT_UPDATED.format(url=url, learner=learner.id, detail=detail, commit=commit))
        return learner
    staging = Path(out) / REPOS_DIR / PARTIAL_DIR / f"{learner.id}.{uuid.uuid4().hex[:8]}"
    failure = _run(["clone", "--bare", "--quiet", "--", learner.url, str(staging)])
    if failure is not None:
        shutil.rmtree(staging, ignore_errors=True)
        if failure == _TIMED_OUT:
            error = TOO_SLOW.format(seconds=FETCH_TIMEOUT, action="clone", url=url) + "."
        else:
            detail = shown(learner.url, failure).rstrip(".")
            error = CLONE_FAILED.format(url=url, detail=detail)
        return replace(learner, repo=None, error=error)
    if copy.exists():  # a copy of another URL (the roster changed): replaced
        shutil.rmtree(copy)
    os.replace(staging, copy)
    return learner


#: Every branch of the remote as a branch of the bare copy (what `clone --bare` made).
_BRANCHES = ("+refs/heads/*:refs/heads/*",)
_TIMED_OUT = "\0timed out"


def _run(args: list[str]) -> str | None:
    """Run git; None when it succeeded, else its last line of errors (or _TIMED_OUT)."""
    try:
        done = subprocess.run(
            ["git", *args],
            env=_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=FETCH_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return _TIMED_OUT
    except OSError as error:
        return f"git did not start ({error})"
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"git exited with status {done.returncode}"


def _read(copy: Path, *args: str) -> str:
    """What git prints for a question about the copy ("" when it fails)."""
    done = subprocess.run(
        ["git", "-C", str(copy), *args], env=_env(), capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


def _env() -> dict[str, str]:
    """The user's environment, without prompts and with only the network transports."""
    env = dict(os.environ)
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_ALLOW_PROTOCOL=ALLOWED_PROTOCOLS,
        GCM_INTERACTIVE="never",  # Git Credential Manager: fail rather than open a dialog
    )
    # A stalled server fails after a minute, not at FETCH_TIMEOUT (unless the user set these).
    env.setdefault("GIT_HTTP_LOW_SPEED_LIMIT", "1000")  # bytes a second, over...
    env.setdefault("GIT_HTTP_LOW_SPEED_TIME", "60")  # ...this many seconds
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=60")
    return env
