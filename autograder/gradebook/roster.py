"""The learners of a class: a folder of repositories or a roster CSV, and a shard of them.

A roster folder holds one folder per learner; the folder name is the learner id. A roster CSV
has a header row with `learner` and `repo` columns; `repo` is a local path (relative to the
CSV's folder), a `file://` URL, or a clone URL (https, http, ssh, git, or scp-like
user@host:path, as GitHub Classroom lists them), which grade-class copies to the machine first
(fetch.py). Any other URL is refused per learner (that row records the error).

Learners are always sorted by id; shard i of n takes every n-th learner starting at i-1, so the
shards are disjoint, cover the roster, and do not depend on the machine that computes them.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlparse, urlsplit

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}")

# Files of the class output folder that a learner's folder must not replace.
RESERVED_IDS = frozenset(
    {
        "gradebook.csv",
        "report.md",
        "report.html",
        "score_distribution.png",
        "component_scores.png",
        "run.json",
        "similarity.csv",
        "similarity.html",
        "nbgrader",
    }
)
RESERVED_ID = (
    "The roster {path} names a learner {learner!r}, which is the name of a file or folder of "
    "the class output (a report, or the nbgrader folder); rename that learner."
)

ROSTER_MISSING = "The roster {path} does not exist; give a folder of learner repositories or a CSV."
CSV_COLUMNS = (
    "The roster CSV {path} must have a header row with the columns learner and repo; got {columns}."
)
CSV_COLUMN_TWICE = (
    "The roster CSV {path} has the column {column} twice in its header row; give each column once."
)
BAD_ID = (
    "The roster {path} has the learner id {learner!r} on line {line}; an id must start with a "
    "letter or digit, use only letters, digits and . _ @ + - and have at most 100 characters "
    "(it names a folder)."
)
BAD_FOLDER_ID = (
    "The roster folder {path} holds a folder {learner!r}, whose name is the learner id; an id "
    "must start with a letter or digit, use only letters, digits and . _ @ + - and have at most "
    "100 characters (rename the folder)."
)
DUPLICATE_ID = "The roster {path} names the learner {learner} twice (lines {first} and {second})."
CASE_TWINS = (
    "The roster {path} names the learners {first} and {second}, ids that differ only in case: "
    "their folders would be one on macOS and Windows; give them ids that differ otherwise."
)
EMPTY_ROSTER = "The roster {path} names no learners."
UNSUPPORTED_URL = (
    "The repository {url} has the URL scheme {scheme}, which batch grading does not fetch; give "
    "a local path, a file:// URL, or a clone URL (https://, ssh://, git:// or user@host:path)."
)
#: Clone URLs grade-class fetches (fetch.py): these schemes, or scp-like user@host:path as git
#: reads it (no "//" after the colon).
CLONE_SCHEMES = frozenset({"https", "http", "ssh", "git"})
SCP_LIKE = re.compile(r"[A-Za-z0-9._~-]+@[A-Za-z0-9.-]+:(?!//).+")
NOT_UTF8 = "The roster {path} is not UTF-8 text ({error}); save it as a UTF-8 CSV file."
BAD_CSV = "The roster {path} is not a readable CSV file ({error})."
UNRESOLVABLE = "The repository path {path} cannot be followed ({error}); fix it in the roster."
MALFORMED_URL = (
    "The roster gives {learner} a clone URL that git cannot use ({problem}); fix it in the roster."
)
#: Not repeated: it could be a clone URL with a token in it.
UNPRINTABLE = (
    "The roster gives {learner} a repository with a line break or another control character in "
    "it; fix it in the roster."
)
BAD_EXTENSION = (
    "The roster {path} gives {learner} extension_days {value!r} on line {line}; expected a "
    "whole number of days from 0 to {most} (or an empty cell for none)."
)
EXTENSION_COLUMN = "extension_days"  # optional: days added to --deadline for that learner
MAX_EXTENSION_DAYS = 365
BAD_SHARD = "--shard must look like i/n with 1 <= i <= n (for example 2/4); got {value!r}."


class RosterError(ValueError):
    """A roster that cannot be read at all; the message is one sentence."""


@dataclass(frozen=True)
class Learner:
    """One roster entry: the id, the repository (None when unusable) and why it is unusable.
    ``url``: the clone URL of a repository to fetch (fetch.py sets ``repo`` to its copy);
    ``note``: what the gradebook should know of a copy that could not be updated."""

    id: str
    repo: Path | None
    error: str = ""
    url: str = ""
    note: str = ""
    extension_days: int = 0  # the roster's extension_days: their deadline is this much later


def read_roster(path: Path) -> list[Learner]:
    """The learners of a roster folder or CSV, sorted by id. RosterError when unreadable."""
    path = Path(path)
    if path.is_dir():
        learners = [
            Learner(child.name, child.resolve())
            for child in path.iterdir()
            if child.is_dir() and not child.name.startswith(".")
        ]
        for learner in learners:
            if not ID_PATTERN.fullmatch(learner.id):
                raise RosterError(BAD_FOLDER_ID.format(path=path, learner=learner.id))
    elif path.is_file():
        try:
            learners = _read_csv(path)
        except UnicodeDecodeError as error:
            raise RosterError(NOT_UTF8.format(path=path, error=error)) from None
        except csv.Error as error:
            raise RosterError(BAD_CSV.format(path=path, error=error)) from None
    else:
        raise RosterError(ROSTER_MISSING.format(path=path))
    if not learners:
        raise RosterError(EMPTY_ROSTER.format(path=path))
    learners = sorted(learners, key=lambda learner: learner.id)
    folded: dict[str, str] = {}
    for learner in learners:
        if learner.id.lower() in RESERVED_IDS:
            raise RosterError(RESERVED_ID.format(path=path, learner=learner.id))
        twin = folded.setdefault(learner.id.casefold(), learner.id)
        if twin != learner.id:  # H37: Ben and ben, two folders here, one on other systems
            raise RosterError(CASE_TWINS.format(path=path, first=twin, second=learner.id))
    return learners


def _read_csv(path: Path) -> list[Learner]:
    with path.open(newline="", encoding="utf-8-sig") as stream:
        reader = csv.DictReader(stream)
        columns = [c.strip().lower() for c in reader.fieldnames or []]
        if "learner" not in columns or "repo" not in columns:
            raise RosterError(CSV_COLUMNS.format(path=path, columns=", ".join(columns) or "none"))
        ours = ("learner", "repo", EXTENSION_COLUMN)
        twice = sorted({c for c in columns if columns.count(c) > 1 and c in ours})
        if twice:  # H48: the last learner column won, and amara's repository was graded as ben
            raise RosterError(CSV_COLUMN_TWICE.format(path=path, column=twice[0]))
        reader.fieldnames = columns
        learners: list[Learner] = []
        lines: dict[str, int] = {}
        for row in reader:
            # The line the row starts on: a quoted field may span lines (H48 was told the line
            # the row ends on)
            line = reader.line_num - sum(str(v).count("\n") for v in row.values())
            learner = (row.get("learner") or "").strip()
            if not learner and not (row.get("repo") or "").strip():
                continue  # a blank line
            if not ID_PATTERN.fullmatch(learner):
                raise RosterError(BAD_ID.format(path=path, learner=learner, line=line))
            if learner in lines:
                raise RosterError(
                    DUPLICATE_ID.format(
                        path=path, learner=learner, first=lines[learner], second=line
                    )
                )
            lines[learner] = line
            entry = _entry(learner, (row.get("repo") or "").strip(), path.parent)
            days = _extension(row.get(EXTENSION_COLUMN), path, learner, line)
            learners.append(replace(entry, extension_days=days))
    return learners


def _extension(value: str | None, path: Path, learner: str, line: int) -> int:
    """The row's extension_days: a whole number of days, 0 for an empty cell or no column."""
    text = (value or "").strip()
    if not text:
        return 0
    if not re.fullmatch(r"[0-9]{1,4}", text) or int(text) > MAX_EXTENSION_DAYS:
        raise RosterError(
            BAD_EXTENSION.format(
                path=path, learner=learner, value=text, line=line, most=MAX_EXTENSION_DAYS
            )
        )
    return int(text)


def _entry(learner: str, repo: str, base: Path) -> Learner:
    """A CSV row's learner: local paths resolved against the CSV's folder, file:// URLs
    unwrapped, clone URLs kept to fetch, any other URL recorded as an error."""
    if any(not ch.isprintable() for ch in repo):  # a line break would start a log line of its own
        return Learner(learner, None, UNPRINTABLE.format(learner=learner))
    if is_clone_url(repo):
        problem = _url_problem(repo)
        if problem:  # the URL is not repeated: it may carry a token
            return Learner(learner, None, MALFORMED_URL.format(learner=learner, problem=problem))
        return Learner(learner, None, url=repo)
    parsed = urlparse(repo)
    if parsed.scheme == "file":
        return _resolved(learner, Path(unquote(parsed.path)))
    if parsed.scheme and len(parsed.scheme) > 1:  # not a Windows drive letter
        return Learner(learner, None, UNSUPPORTED_URL.format(url=repo, scheme=parsed.scheme))
    if not repo:
        return Learner(learner, None, f"The roster gives no repository for {learner}.")
    return _resolved(learner, base / repo)


def is_clone_url(repo: str) -> bool:
    """Whether a roster's repository is a clone URL to fetch (https, http, ssh, git, or
    scp-like user@host:path)."""
    scheme, sep, _ = repo.partition("://")
    return (bool(sep) and scheme.lower() in CLONE_SCHEMES) or bool(SCP_LIKE.fullmatch(repo))


def _url_problem(url: str) -> str:
    """Why a clone URL cannot be used ("" when it can): what urlsplit says of it, or the
    white space or control character it holds."""
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return "it holds white space or a control character"
    if "://" in url:
        try:
            urlsplit(url).port  # noqa: B018 - parsing is the check (an unbalanced [, a bad port)
        except ValueError as error:
            return str(error)
    return ""


def _resolved(learner: str, path: Path) -> Learner:
    """The learner with their repository's real path, or the row's error when it has none (a
    symbolic link loop ended the whole command with a traceback)."""
    try:
        return Learner(learner, path.resolve())
    except (OSError, RuntimeError) as error:
        return Learner(learner, None, UNRESOLVABLE.format(path=path, error=error))


def parse_shard(value: str | None) -> tuple[int, int] | None:
    """'i/n' -> (i, n), 1-based; None for no sharding. RosterError for anything else."""
    if value is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not match:
        raise RosterError(BAD_SHARD.format(value=value))
    index, count = int(match[1]), int(match[2])
    if not 1 <= index <= count:
        raise RosterError(BAD_SHARD.format(value=value))
    return index, count


def shard(learners: list[Learner], selection: tuple[int, int] | None) -> list[Learner]:
    """Shard i of n of the id-sorted learners: positions i-1, i-1+n, i-1+2n, ..."""
    ordered = sorted(learners, key=lambda learner: learner.id)
    if selection is None:
        return ordered
    index, count = selection
    return ordered[index - 1 :: count]


NO_ROSTER_COLUMN = (
    "The roster {path} has no column {column!r}; its columns are: {columns}. Give "
    "--roster-column one of them."
)
ROSTER_VALUE_TWICE = (
    "The roster {path} gives {column} {value!r} to both {first} and {second}; each learner "
    "needs their own, or one learner's grade would go to another."
)


def roster_column(path: Path, column: str) -> dict[str, str]:
    """{learner id: their value in the roster CSV's ``column``} (column names compared
    without regard to case, as read_roster does); RosterError (a sentence) when the roster has
    no such column, or gives one value (ignoring case) to two learners."""
    if not Path(path).is_file():
        raise RosterError(ROSTER_MISSING.format(path=path))
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as stream:
            reader = csv.DictReader(stream)
            columns = [c.strip().lower() for c in reader.fieldnames or []]
            if "learner" not in columns or column.strip().lower() not in columns:
                raise RosterError(
                    NO_ROSTER_COLUMN.format(path=path, column=column, columns=", ".join(columns))
                )
            reader.fieldnames = columns
            rows = [row for row in reader if (row.get("learner") or "").strip()]
    except UnicodeDecodeError as error:
        raise RosterError(NOT_UTF8.format(path=path, error=error)) from None
    except csv.Error as error:
        raise RosterError(BAD_CSV.format(path=path, error=error)) from None
    values: dict[str, str] = {}
    owners: dict[str, str] = {}
    for row in rows:
        learner, value = row["learner"].strip(), (row.get(column.strip().lower()) or "").strip()
        values[learner] = value
        first = owners.setdefault(value.casefold(), learner) if value else learner
        if first != learner:
            raise RosterError(
                ROSTER_VALUE_TWICE.format(
                    path=path, column=column, value=value, first=first, second=learner
                )
            )
    return values
