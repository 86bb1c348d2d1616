"""Each learner's GitHub repository (owner/name), from the roster grade-class reads.

A roster CSV names it in a ``github`` column (``ORG/t101-amara``), or its ``repo`` column is
a clone URL on the GitHub server the API belongs to (https://github.com/ORG/t101-amara.git,
git@github.com:ORG/t101-amara.git, ssh://git@github.com/ORG/t101-amara); the ``github``
column wins. A learner with neither, or whose URL is on another host, gets a sentence instead
(publish reports it in their row). A roster folder has no such column: every learner gets
that sentence.

The server is GITHUB_SERVER_URL's host (set in every Actions job), else the API's:
api.github.com is github.com's, https://HOST/api/v3 is HOST's (GitHub Enterprise Server),
api.SUB.ghe.com is SUB.ghe.com's.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from autograder.github.rest import DEFAULT_API_URL
from autograder.gradebook.roster import SCP_LIKE, read_roster

OWNER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
BAD_COLUMN = (
    "The roster's github column gives {learner} {value!r}; expected owner/name, e.g. "
    "ORG/t101-{learner}."
)
NO_REPOSITORY = (
    "The roster gives no GitHub repository for {learner}: add a github column (owner/name) "
    "or give a clone URL on {host}."
)
OTHER_HOST = (
    "The roster's clone URL for {learner} is on {found}, not on {host}, the GitHub server "
    "these statuses go to; add a github column (owner/name)."
)


@dataclass(frozen=True)
class Repository:
    """A learner's repository ``owner/name``, or ``error``: why there is none."""

    learner: str
    name: str = ""
    error: str = ""


def server_host(env: Mapping[str, str]) -> str:
    """The GitHub server's host name: GITHUB_SERVER_URL's, else derived from GITHUB_API_URL."""
    server = urlsplit(env.get("GITHUB_SERVER_URL", "")).hostname
    if server:
        return server.lower()
    api = urlsplit(env.get("GITHUB_API_URL") or DEFAULT_API_URL).hostname or "api.github.com"
    return api.lower().removeprefix("api.")


def repository_of_url(url: str, host: str) -> tuple[str, str]:
    """(owner/name, the URL's host) of a clone URL; owner/name is "" when the URL is not on
    ``host`` or has no owner/name path."""
    if SCP_LIKE.fullmatch(url):
        where, _, path = url.partition("@")[2].partition(":")
    else:
        parts = urlsplit(url)
        where, path = parts.hostname or "", parts.path
    where = where.lower()
    name = path.strip("/").removesuffix(".git")
    if where != host or not OWNER_NAME.fullmatch(name):
        return "", where
    return name, where


def read_repositories(roster: Path, host: str) -> dict[str, Repository]:
    """Every roster learner's Repository, by id (RosterError when the roster cannot be read)."""
    learners = read_roster(roster)
    column = _github_column(Path(roster)) if Path(roster).is_file() else {}
    found = {}
    for learner in learners:
        given = column.get(learner.id, "")
        if given:
            ok = OWNER_NAME.fullmatch(given)
            error = "" if ok else BAD_COLUMN.format(learner=learner.id, value=given)
            found[learner.id] = Repository(learner.id, given if ok else "", error)
            continue
        name, where = repository_of_url(learner.url, host) if learner.url else ("", "")
        if name:
            found[learner.id] = Repository(learner.id, name)
        elif where:
            sentence = OTHER_HOST.format(learner=learner.id, found=where, host=host)
            found[learner.id] = Repository(learner.id, error=sentence)
        else:
            sentence = NO_REPOSITORY.format(learner=learner.id, host=host)
            found[learner.id] = Repository(learner.id, error=sentence)
    return found


def _github_column(path: Path) -> dict[str, str]:
    """learner id -> the github column's value, stripped ({} without that column)."""
    with path.open(newline="", encoding="utf-8-sig") as stream:
        reader = csv.DictReader(stream)
        reader.fieldnames = [c.strip().lower() for c in reader.fieldnames or []]
        if "github" not in reader.fieldnames:
            return {}
        return {
            (row.get("learner") or "").strip(): (row.get("github") or "").strip() for row in reader
        }
