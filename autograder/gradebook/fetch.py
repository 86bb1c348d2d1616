"""Learner repositories given by clone URL, copied to this machine before they are graded.

A roster may give a repository as a clone URL (``https://``, ``http://``, ``ssh://``,
``git://``, scp-like ``user@host:path``). Its copy is a bare repository in
DIR/.repos/<learner>.git, graded exactly as a local clone (snapshot.py).

* ``locate`` gives those learners their copy's path before anything is fetched (the path is
  part of settings.settings_key, so a resumed run does not fetch a graded learner again).
* ``fetch`` clones (into DIR/.repos/.partial, then a rename) or updates the copies of the
  learners still to grade, several at a time. A failed clone becomes that learner's row; a
  failed update clones again (a damaged copy) or grades the copy as fetched before, with a
  note (a server that cannot be reached).
* No token stays on disk (url_secrets.py), and a roster line cannot pass git an option (the URL
  comes after ``--``). git runs as git_network.py says.

Design: docs/internals/gradebook.md#learner-repositories-by-clone-url.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from autograder.gradebook.git_network import Commands, Outcome, cause, network_env
from autograder.gradebook.roster import Learner
from autograder.gradebook.snapshot import local_git
from autograder.gradebook.url_secrets import carries_credentials, shown, without_userinfo

REPOS_DIR = ".repos"  # in DIR: the bare copies of repositories given by URL
PARTIAL_DIR = ".partial"  # in DIR/.repos: clones being made, renamed into place when done
FETCH_TIMEOUT = 600.0  # seconds for one repository's clone or update
FETCH_JOBS = 8  # repositories fetched at once (network-bound, not CPU-bound)
SOURCE_KEY = "autograder.source"  # in a copy's config: the SHA-256 of the URL it was cloned from

CLONE_FAILED = "git could not clone {url}: {detail}."
TOO_SLOW = "git took longer than {seconds:.0f} s to {action} {url}"
NOT_UPDATED = (
    "Could not update the copy of {url} for {learner} ({detail}); grading the copy fetched "
    "before (its HEAD is {commit})."
)
REPOS_NOT_FOLDER = (
    "{path} is not a folder, but grade-class keeps the copies of the repositories the roster "
    "gives by clone URL there; move it away, or choose another --out, and run again."
)

#: One line for the console (a copy that could not be updated); quiet mode drops it.
Say = Callable[[str], None]


class FetchError(Exception):
    """The copies cannot be kept in DIR at all; the message is one sentence."""


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
    called (from a worker thread) as each repository is done, for a progress bar.

    Raises FetchError when DIR/.repos is not a folder. An interrupt (KeyboardInterrupt) stops
    every git started, then propagates."""
    wanted = [learner for learner in learners if learner.url]
    if not wanted:
        return learners
    repos = Path(out) / REPOS_DIR
    if repos.exists() and not repos.is_dir():
        raise FetchError(REPOS_NOT_FOLDER.format(path=repos))
    partial = repos / PARTIAL_DIR
    _remove(partial)  # clones a killed run left half made
    partial.mkdir(parents=True)
    commands = Commands()  # closed below: the reaper ends with the fetch

    def bring(learner: Learner) -> Learner:
        brought = _bring(learner, out, partial, say, commands)
        done(brought)
        return brought

    pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, len(wanted))))
    try:
        brought = dict(zip(wanted, pool.map(bring, wanted), strict=True))
    except BaseException:  # Ctrl-C: no git may go on in the background
        commands.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown()
        commands.close()
    return [brought.get(learner, learner) for learner in learners]


def _bring(learner: Learner, out: Path, partial: Path, say: Say, commands: Commands) -> Learner:
    url = shown(learner.url)
    copy = copy_path(out, learner.id)
    try:
        if _is_copy_of(copy, learner.url):
            note = _update(learner, copy, partial, url, say, commands)
            return replace(learner, note=note) if note else learner
        return _clone(learner, copy, partial, url, commands)
    except Exception as error:  # git missing, DIR/.repos not writable: this row, not the run
        detail = shown(learner.url, f"{type(error).__name__}: {error}")
        return replace(learner, repo=None, error=CLONE_FAILED.format(url=url, detail=detail))


def _update(
    learner: Learner, copy: Path, partial: Path, url: str, say: Say, commands: Commands
) -> str:
    """Bring every branch of the copy up to date, and its HEAD to the server's default branch
    (renamed, or first pushed after an empty clone). When git fails, clone it again; when that
    fails too (or the update took too long), say so and keep the copy: the sentence, also
    the learner's note in the gradebook ("" when updated)."""
    done = _network(
        commands, copy, learner.url, "fetch", "--quiet", "--prune", "--", learner.url, *_BRANCHES
    )
    if done.ok:
        _follow_head(commands, copy, learner.url)
        return ""
    if done.status is None and commands.stopped:
        return ""  # interrupted: the command is ending
    if done.status is None:
        detail = TOO_SLOW.format(seconds=FETCH_TIMEOUT, action="update", url=url)
    else:
        # The copy itself at fault (damaged objects, a ref lock a killed fetch left): a fresh
        # clone replaces it. Not when the server is (unreachable, silent): that would wait
        # twice for nothing.
        if _LOCAL_TROUBLE.search(done.stderr):
            recloned = _clone(learner, copy, partial, url, commands)
            if not recloned.error or commands.stopped:
                return ""
        detail = shown(learner.url, cause(done.stderr, done.status))
    commit = _local(copy, "rev-parse", "--verify", "--quiet", "HEAD") or "none"
    sentence = NOT_UPDATED.format(url=url, learner=learner.id, detail=detail, commit=commit)
    say(sentence)
    return sentence


def _clone(learner: Learner, copy: Path, partial: Path, url: str, commands: Commands) -> Learner:
    staging = partial / f"{learner.id}.{uuid.uuid4().hex[:8]}"
    done = commands.run(
        [*_no_helper(learner.url), "clone", "--bare", "--quiet", "--", learner.url, str(staging)],
        network_env(),
        FETCH_TIMEOUT,
    )
    if not done.ok:
        _remove(staging)
        if done.status is None:
            error = TOO_SLOW.format(seconds=FETCH_TIMEOUT, action="clone", url=url) + "."
        else:
            detail = shown(learner.url, cause(done.stderr, done.status))
            error = CLONE_FAILED.format(url=url, detail=detail)
        return replace(learner, repo=None, error=error)
    # No token stays on disk: the copy records the URL without its user part, and which URL
    # it came from only as a digest; updates give git the URL again.
    _local(staging, "config", "remote.origin.url", without_userinfo(learner.url))
    _local(staging, "config", SOURCE_KEY, _digest(learner.url))
    # The old copy (of another URL, damaged, or anything else there) is moved aside whole
    # first: one that cannot be deleted stays intact instead of half deleted.
    trash = partial / f"-old-{learner.id}.{uuid.uuid4().hex[:8]}"
    if copy.is_symlink() or copy.is_file():
        copy.unlink()
    elif copy.exists():
        os.replace(copy, trash)
    os.replace(staging, copy)
    _remove_quietly(trash)
    return learner


def _follow_head(commands: Commands, copy: Path, url: str) -> None:
    """Point the copy's HEAD at the branch the server's HEAD names, when the copy has it."""
    done = _network(commands, copy, url, "ls-remote", "--symref", "--", url, "HEAD")
    first = done.stdout.partition("\n")[0] if done.ok else ""
    if not first.startswith("ref: refs/heads/"):
        return
    branch = first.removeprefix("ref: ").split("\t")[0]
    if _local(copy, "symbolic-ref", "--quiet", "HEAD") == branch:
        return
    if _local(copy, "rev-parse", "--verify", "--quiet", branch):
        _local(copy, "symbolic-ref", "HEAD", branch)


#: git's words for a fault of the copy itself, not of the server or the network.
_LOCAL_TROUBLE = re.compile(
    r"cannot lock ref|unable to create .*\.lock|inflate|corrupt|bad object|packfile|"
    r"loose object|not a git repository|index-pack failed|unable to write",
    re.IGNORECASE,
)
#: Every branch of the remote as a branch of the bare copy (what `clone --bare` made).
_BRANCHES = ("+refs/heads/*:refs/heads/*",)


def _network(commands: Commands, copy: Path, url: str, *args: str) -> Outcome:
    """git ARGS (which end with url) against the server, on the copy."""
    return commands.run(
        [*_no_helper(url), "--git-dir", str(copy), *args], network_env(), FETCH_TIMEOUT
    )


def _no_helper(url: str) -> list[str]:
    """For a URL that carries its own credentials, git options that turn the user's
    credential helpers off: a helper such as `store` would write the token to disk."""
    return ["-c", "credential.helper="] if carries_credentials(url) else []


def _is_copy_of(copy: Path, url: str) -> bool:
    """Whether copy is a bare copy this module cloned from url."""
    if copy.is_symlink() or not copy.is_dir():
        return False
    return _local(copy, "config", "--get", SOURCE_KEY) == _digest(url)


def _digest(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


def _remove_quietly(path: Path) -> None:
    try:
        _remove(path)
    except OSError:  # left in DIR/.repos/.partial, which the next fetch clears
        pass


def _remove(path: Path) -> None:
    """Remove a file, a link (not what it points to) or a folder, if there is one."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def _local(copy: Path, *args: str) -> str:
    """What git prints for a command on the copy alone ("" when it fails; SnapshotError when
    git cannot start or takes longer than snapshot.GIT_TIMEOUT): snapshot.local_git."""
    return local_git(copy, *args, check=False, git_dir=True)
