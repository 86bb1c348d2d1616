"""What of a clone URL may be shown or kept: a token or password written into it never is.

A roster may give a private repository as https://TOKEN@host/... (what GitHub Classroom's
token URLs look like), https://user:TOKEN@host/..., ssh://user:PASSWORD@host/... or with a
token in its query string. ``shown`` is the URL (or a text quoting it, like git's messages) as a
gradebook row or a console line may show it; ``without_userinfo`` the URL as a copy's git
config may keep it; ``carries_credentials`` whether git's credential helpers must not see it.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit


def shown(url: str, text: str | None = None) -> str:
    """``text`` (default: the URL itself) as it may be shown in a gradebook or on a console,
    and control characters (a server's message may carry terminal escapes) dropped.

    Hidden: the user part of an https or http URL, where a token goes (https://TOKEN@host/...
    or https://user:TOKEN@host/...), wherever it is followed by "@" (a lone user part may be a
    token; the same name elsewhere, in a path, is kept); a password (https, http or
    ssh://user:PASSWORD@host/...), a query string (?access_token=...) and a fragment; each
    also where it stands alone in text, when at least _SECRET_LENGTH characters long."""
    text = url if text is None else text
    try:
        parts = urlsplit(url) if "://" in url else None
        password = parts.password if parts else None
    except ValueError:  # not a URL urlsplit reads (the roster refuses those): hide it whole
        return "".join(ch for ch in text.replace(url, "the URL") if ch.isprintable())
    if parts is not None:
        scheme = parts.scheme.lower()
        userinfo, at, host = parts.netloc.rpartition("@")
        secrets = [parts.query, parts.fragment]
        if at and scheme in ("https", "http"):
            # A lone user part: only before @, as the roster wrote it, without an empty
            # password's colon and percent-decoded, as git quotes it (H35).
            user = userinfo.partition(":")[0]
            forms = {userinfo, user, unquote(userinfo), unquote(user)} - {""}
            for form in sorted(forms, key=len, reverse=True):
                text = text.replace(form + "@", "***@")
            secrets += [password or "", unquote(password or "")]
        elif password and scheme == "ssh":
            user = userinfo.partition(":")[0]
            text = text.replace(userinfo + "@", f"{user}:***@")
            secrets.append(password)
        for part, mark in ((parts.query, "?"), (parts.fragment, "#")):
            if part:
                text = text.replace(mark + part, mark + "***")
        for secret in secrets:  # git may quote one apart from the URL; a short one is not
            if len(secret) >= _SECRET_LENGTH:  # replaced elsewhere (it would garble words)
                text = text.replace(secret, "***")
    return "".join(ch for ch in text if ch.isprintable())


#: A password, token or query at least this long is also hidden where it stands alone.
_SECRET_LENGTH = 6


def without_userinfo(url: str) -> str:
    """The URL without its user part (scp-like user@host:path as it is: no password there)."""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host))


def carries_credentials(url: str) -> bool:
    """Whether the URL has a user part (a token, a password), or cannot be read to tell."""
    try:
        return "://" in url and "@" in urlsplit(url).netloc
    except ValueError:
        return True
