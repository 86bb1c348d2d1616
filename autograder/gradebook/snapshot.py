"""Which commit of a learner's repository is graded, and a private copy of it.

A learner's clone is never modified: no checkout, no worktree, no fetch. The graded commit is
HEAD, or with a deadline the latest commit reachable from HEAD whose committer time is at or
before the deadline (ties: the first in `git log` order); `later` records whether HEAD's history
also holds commits after the deadline. The commit's tree is exported with `git archive` into a
temporary folder and graded from there.

A folder that is not a git repository is graded as it is (no commit), unless a deadline is
given: then nothing says what existed at the deadline, so it is an error.

A repository the learner could have written whole (a roster folder, a path in a CSV roster, as
opposed to a copy the batch fetched itself) is never read by git in place: its configuration
is the learner's, and `git archive` runs the filter commands a configuration names, outside any
sandbox. It is first copied into the batch's scratch folder with `git clone --bare --no-local`
(the pack protocol: objects and refs only, never the configuration), and refused when its git
folder points outside itself (a link, a `.git` file, alternates, a common dir).
"""

from __future__ import annotations

import errno
import os
import posixpath
import subprocess
import tarfile
import tempfile
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from autograder.gradebook.git_network import cause
from autograder.learner_files import shown

GIT_TIMEOUT = 120.0  # seconds for one git command on a learner repository
MAX_EXPORT_BYTES = 1024 * 2**20  # files of the graded commit: a learner's code, not data
MAX_EXPORT_FILES = 50_000  # files and folders of the graded commit (200,000 took 36 s)

MISSING = "The repository {path} does not exist."
NOT_FOLDER = "The repository {path} is a file, not a folder."
EMPTY = "The folder {path} is empty, so there is nothing to grade."  # a repository or not
NO_COMMITS = "The repository {path} has no commits yet, so there is nothing to grade."
NO_CALENDAR_DATE = (
    "Commit {commit} in {path} has a committer time ({seconds} seconds since 1970) that no "
    "calendar date between the years 1 and 9999 holds, so the deadline cannot be applied to it; "
    "the learner commits again with a real date (git commit --amend --date=now --no-edit)."
)
#: The committer times (seconds since 1970) that a datetime can hold: years 1 to 9999.
CALENDAR_SECONDS = (-62135596800, 253402300799)
HEAD_MISSING = (
    "The repository {path} has commits, but its default branch {head} does not exist (its "
    "branches include {branches}); make one of those the default branch."
)
NONE_BEFORE = (
    "The repository {path} has no commit at or before the deadline {deadline}; its first commit "
    "is from {first}."
)
SHALLOW = (
    "The repository {path} is a shallow clone: its oldest commit here is from {first}, after the "
    "deadline {deadline}, and the commits before it are not in the clone; fetch its whole "
    "history (git fetch --unshallow) and grade it again."
)
NOT_GIT_WITH_DEADLINE = (
    "The folder {path} is not a git repository, so the commit at the deadline {deadline} cannot "
    "be read; grade it without --deadline or give a clone."
)
TOO_BIG = (
    "The graded commit of {path} holds more than {limit} MB of files; the grader exports at "
    "most {limit} MB (remove large files from the repository)."
)
TOO_MANY = (
    "The graded commit of {path} holds more than {limit} files and folders; the grader exports "
    "at most {limit} (remove generated or copied files from the repository)."
)
#: Why an entry of the graded commit was left out of the export (the learner's report says it).
LINK_LEFT_OUT = "a symbolic link: commit the file itself"
OTHER_LEFT_OUT = "not a regular file or folder"
LONG_NAME_LEFT_OUT = "its name is longer than this system allows"
SUBMODULE_LEFT_OUT = "a submodule: its files are in another repository, commit them in this one"
GIT_FAILED = "git could not read the repository {path}: {detail}"
GIT_DIR_OUTSIDE = (
    "The repository {path} is not graded: its git folder reaches outside itself ({entry} is "
    "{what}), so its commits could be another repository's; commit your work in a plain clone."
)
#: What GIT_DIR_OUTSIDE names (an entry of the git folder, and what it is).
A_LINK = "a symbolic link"
A_POINTER = "a file that names another git folder"
OUT_POINTERS = ("objects/info/alternates", "objects/info/http-alternates", "commondir")
EXPORT_TOO_SLOW = (
    "git took longer than {seconds:.0f} s to export the graded commit of {path}; it was stopped."
)
NAIVE_DEADLINE = (
    "--deadline must be an ISO 8601 time with a time zone, like 2026-08-15T23:59:00+05:30; "
    "got {value!r}."
)


class SnapshotError(Exception):
    """A repository that cannot be graded; the message is one sentence for the gradebook."""


class NothingSubmitted(SnapshotError):
    """The learner gave nothing to grade: an empty folder or repository, no commit, or no
    commit at or before the deadline. A row of its own kind (H47: counted with the grader's
    errors, such learners could not be told from a grading that broke)."""


@dataclass(frozen=True)
class Selection:
    """The graded commit ("" for a plain folder), its committer time (ISO 8601, UTC) and
    whether commits after the deadline exist (None without a deadline); with them, how many
    and the committer time of the last one."""

    commit: str = ""
    commit_time: str = ""
    later: bool | None = None
    later_count: int = 0
    last_time: str = ""


def parse_deadline(value: str | None) -> datetime | None:
    """An aware datetime from ISO 8601; ValueError with a sentence when naive or malformed."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(NAIVE_DEADLINE.format(value=value)) from None
    if moment.tzinfo is None:
        raise ValueError(NAIVE_DEADLINE.format(value=value))
    return moment


def is_git_repository(path: Path) -> bool:
    """True for a clone's top folder (with .git) or a bare repository."""
    if (path / ".git").exists():
        return True
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def private_clone(path: Path, target: Path) -> Path:
    """The repository to read for the learner's folder at ``path``: ``path`` itself when it is
    no git repository (graded as a folder), else a bare copy made at ``target`` with the pack
    protocol, which carries no configuration (see the module docstring). SnapshotError when the
    git folder reaches outside itself, or git cannot copy it."""
    if not path.is_dir() or not is_git_repository(path):
        return path
    git_dir = path / ".git" if os.path.lexists(path / ".git") else path
    _refuse_outside(path, git_dir)
    clone = ("clone", "--bare", "--no-local", "--quiet", "--", str(path), str(target))
    local_git(target.parent, *clone, shown=path)
    return target


def _refuse_outside(path: Path, git_dir: Path) -> None:
    """SnapshotError when the git folder is a link or a ``.git`` file, holds a link, or names
    other object stores or a common dir."""
    if os.path.islink(git_dir):
        raise SnapshotError(GIT_DIR_OUTSIDE.format(path=path, entry=git_dir.name, what=A_LINK))
    if not git_dir.is_dir():
        raise SnapshotError(GIT_DIR_OUTSIDE.format(path=path, entry=git_dir.name, what=A_POINTER))
    for pointer in OUT_POINTERS:
        if os.path.lexists(git_dir / pointer):
            raise SnapshotError(GIT_DIR_OUTSIDE.format(path=path, entry=pointer, what=A_POINTER))
    for folder, names, files in os.walk(git_dir):  # os.walk follows no link to a folder
        for name in [*names, *files]:
            if os.path.islink(os.path.join(folder, name)):
                entry = os.path.relpath(os.path.join(folder, name), git_dir)
                raise SnapshotError(GIT_DIR_OUTSIDE.format(path=path, entry=entry, what=A_LINK))


def select(path: Path, deadline: datetime | None) -> Selection:
    """The commit to grade in the repository at path. SnapshotError when there is none."""
    if not path.exists():
        raise SnapshotError(MISSING.format(path=path))
    if not path.is_dir():
        raise SnapshotError(NOT_FOLDER.format(path=path))
    if not any(path.iterdir()):
        raise NothingSubmitted(EMPTY.format(path=path))
    if not is_git_repository(path):
        if deadline is not None:
            raise SnapshotError(NOT_GIT_WITH_DEADLINE.format(path=path, deadline=_iso(deadline)))
        return Selection()
    if local_git(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False) == "":
        branches = local_git(
            path, "for-each-ref", "--format=%(refname:short)", "refs/heads", check=False
        )
        if branches:  # commits, but HEAD names a branch that does not exist
            head = local_git(path, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
            raise SnapshotError(
                HEAD_MISSING.format(
                    path=path, head=head or "HEAD", branches=", ".join(branches.split()[:5])
                )
            )
        raise NothingSubmitted(NO_COMMITS.format(path=path))
    history = _history(path)
    if deadline is None:
        commit, seconds = history[0]
        return Selection(commit, _iso_seconds(seconds), None)
    limit = deadline.timestamp()
    before = [(c, s) for c, s in history if s <= limit]
    if not before:
        first = min(s for _, s in history)
        shallow = local_git(path, "rev-parse", "--is-shallow-repository", check=False)
        # H48: a shallow clone's older commits were not there to choose from, and the row
        # said there were none
        error = SnapshotError if shallow == "true" else NothingSubmitted
        template = SHALLOW if shallow == "true" else NONE_BEFORE
        raise error(template.format(path=path, deadline=_iso(deadline), first=_iso_seconds(first)))
    commit, seconds = max(before, key=lambda item: item[1])  # max keeps the first of ties
    after = [s for _, s in history if s > limit]
    last = _iso_seconds(max(after)) if after else ""
    return Selection(commit, _iso_seconds(seconds), bool(after), len(after), last)


def export(
    path: Path, selection: Selection, target: Path, left_out: list[tuple[str, str]] | None = None
) -> Path:
    """The folder to grade: the repository itself for a plain folder, otherwise the selected
    commit's tree extracted into target (created). Regular files and folders only, streamed
    from `git archive` (a pushed file of gigabytes never sits in memory), and at most
    MAX_EXPORT_BYTES and MAX_EXPORT_FILES of them: SnapshotError beyond. Each entry left out
    (a symbolic link, a name too long for this system, a submodule) is added to ``left_out``
    as (its path in the commit, why: LINK_, OTHER_, LONG_NAME_ or SUBMODULE_LEFT_OUT)."""
    if left_out is None:
        left_out = []
    if not selection.commit:
        return path
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as errors:
        archive = subprocess.Popen(
            ["git", "-C", str(path), "archive", "--format=tar", selection.commit],
            stdout=subprocess.PIPE,
            stderr=errors,
            env=local_git_env(),
        )
        # A git that stalls mid-archive would block the read below forever: killed at the limit.
        stalled = threading.Event()

        def stop() -> None:
            stalled.set()
            archive.kill()

        watchdog = threading.Timer(GIT_TIMEOUT, stop)
        watchdog.start()
        try:
            try:
                _extract(archive.stdout, target, path, left_out)
                broken = None
            except tarfile.TarError as error:  # git stopped mid-archive, or wrote nonsense
                broken = error
            archive.stdout.close()
            status = archive.wait(timeout=GIT_TIMEOUT)
        except BaseException:
            archive.kill()
            archive.wait()
            raise
        finally:
            watchdog.cancel()
        if stalled.is_set():
            raise SnapshotError(EXPORT_TOO_SLOW.format(seconds=GIT_TIMEOUT, path=path))
        if status != 0:
            errors.seek(0)
            raise SnapshotError(GIT_FAILED.format(path=path, detail=_detail(errors.read(), status)))
        if broken is not None:
            raise SnapshotError(GIT_FAILED.format(path=path, detail=f"{broken}."))
    return target


def _extract(stream, target: Path, path: Path, left_out: list[tuple[str, str]]) -> None:
    """Extract a tar stream's regular files and folders into target, at most MAX_EXPORT_BYTES
    and MAX_EXPORT_FILES (SnapshotError beyond); what is left out, and why, into left_out."""
    total = count = 0
    folders: set[str] = set()
    parents: set[str] = set()
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            parents.add(posixpath.dirname(member.name.rstrip("/")))
            if member.isdir():
                folders.add(member.name.rstrip("/"))
            count += 1  # what is left out too: a commit of 150,000 links is no submission
            if count > MAX_EXPORT_FILES:
                raise SnapshotError(TOO_MANY.format(path=path, limit=MAX_EXPORT_FILES))
            if not (member.isfile() or member.isdir()):
                why = LINK_LEFT_OUT if member.issym() or member.islnk() else OTHER_LEFT_OUT
                left_out.append((_readable(member.name), why))
                continue
            total += member.size
            if total > MAX_EXPORT_BYTES:
                raise SnapshotError(TOO_BIG.format(path=path, limit=MAX_EXPORT_BYTES // 2**20))
            try:
                tar.extract(member, target, filter="data")
            except OSError as error:
                if error.errno != errno.ENAMETOOLONG:
                    raise
                left_out.append((_readable(member.name), LONG_NAME_LEFT_OUT))
    # git keeps no empty folder: an empty one in the archive is a submodule (a gitlink).
    left_out += [(_readable(name), SUBMODULE_LEFT_OUT) for name in sorted(folders - parents)]


def _readable(name: str) -> str:
    """A name from the archive as a report or a log may write it: bytes that are not UTF-8
    (tarfile keeps them as surrogates, which no UTF-8 file can hold) become U+FFFD, and a line
    break or another control character its escape (a learner names their files)."""
    return shown(name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


def _history(path: Path) -> list[tuple[str, float]]:
    """(commit, committer time in seconds) for every commit reachable from HEAD, newest first."""
    out = local_git(path, "log", "--format=%H %ct", "HEAD")
    history = []
    for line in out.splitlines():
        commit, _, seconds = line.partition(" ")
        if commit:
            history.append((commit, _calendar_seconds(path, commit, seconds)))
    if not history:
        raise NothingSubmitted(NO_COMMITS.format(path=path))
    return history


def _calendar_seconds(path: Path, commit: str, seconds: str) -> float:
    """A committer time git printed, as seconds; SnapshotError when no calendar date holds it
    (a commit object written by hand can carry any number)."""
    value = float(seconds)
    if not CALENDAR_SECONDS[0] <= value <= CALENDAR_SECONDS[1]:
        raise SnapshotError(NO_CALENDAR_DATE.format(commit=commit[:12], path=path, seconds=seconds))
    return value


def local_git(
    path: Path, *args: str, check: bool = True, git_dir: bool = False, shown: Path | None = None
) -> str:
    """What git prints for ARGS on the repository at path, without the user's configuration
    (local_git_env), which a command that only reads or writes this repository needs not;
    "" when git fails and not ``check``. ``git_dir``: path is the git folder itself
    (--git-dir: a folder that is not a repository never means an enclosing one), else a work
    tree or a bare repository (-C).

    Raises SnapshotError (GIT_FAILED, naming ``shown`` if given, else path) when git cannot
    start or takes longer than GIT_TIMEOUT, or fails while ``check``."""
    where = ["--git-dir", str(path)] if git_dir else ["-C", str(path)]
    named = path if shown is None else shown
    try:
        done = subprocess.run(
            ["git", *where, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT,
            env=local_git_env(),
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SnapshotError(GIT_FAILED.format(path=named, detail=error)) from None
    if done.returncode != 0:
        if not check:
            return ""
        raise SnapshotError(
            GIT_FAILED.format(path=named, detail=_detail(done.stderr, done.returncode))
        )
    return done.stdout.strip()


def local_git_env() -> dict[str, str]:
    """git without the user's config, hooks or pager, and trusting the learner's repository
    (it is only read)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0="safe.directory",
        GIT_CONFIG_VALUE_0="*",
    )
    return env


def _detail(stderr: bytes | str, status: int | None) -> str:
    """Why git failed, as a sentence: the line of its messages that says so (git_network)."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    return cause(text, status) + "."


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def _iso_seconds(seconds: float) -> str:
    return _iso(datetime.fromtimestamp(seconds, UTC))
