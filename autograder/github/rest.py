"""A small client of GitHub's REST API: the token, rate limits and pagination handled once.

* Where: ``$GITHUB_API_URL`` (default https://api.github.com), every request relative to it.
* The token (``$GH_TOKEN``) goes in the ``Authorization`` header only. Every sentence this
  module makes passes through ``Api.scrub``; a ``Link`` to another scheme, host or port than
  the API's is refused, not followed.
* Rate limits, 5xx answers and lost connections are waited out, at most ``max_wait`` seconds
  and MAX_TRIES tries in all; then a transient ApiError. ``sleep`` and ``clock`` are injected,
  so tests never wait.
* Pagination: ``pages`` follows ``Link: <...>; rel="next"`` (per_page=100).

Design (the waits and their sources): docs/internals/gradebook.md#the-github-rest-client.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
MAX_TRIES = 6
MAX_WAIT = 900.0  # seconds a request may wait for rate limits in all
SECONDARY_WAIT = 60.0  # GitHub: "wait at least one minute" before retrying a secondary limit
SERVER_WAIT = 2.0  # the first wait after a 5xx or a lost connection; doubled each time
TIMEOUT = 30.0  # seconds for one request

NO_TOKEN = (
    "No GitHub token: set GH_TOKEN to a token that may write commit statuses on the learners' "
    "repositories (docs/instructor/publish.md)."
)
BAD_API_URL = "GITHUB_API_URL is {url!r}; expected an https:// (or http://) URL of GitHub's API."
ANSWERED = "GitHub answered {status} to {method} {path}: {message}"
UNREACHABLE = "GitHub's API at {base} could not be reached for {method} {path} ({detail})."
GAVE_UP = (
    "GitHub still limited the rate of {method} {path} after {tries} tries and {waited:.0f} s "
    "of waiting (the next wait would be {wait:.0f} s); a later run will try again."
)
FOREIGN_LINK = (
    "GitHub's answer to GET {path} points to its next page at another address ({where}); "
    "the token is sent to {base} only, so the listing stops here."
)
NOT_JSON = "GitHub's answer to {method} {path} is not JSON ({detail})."
HINTS = {
    401: "the token is not valid (expired or revoked?)",
    403: "the token may not do this (a permission it lacks)",
    404: "the repository does not exist, or the token cannot see it",
    422: "GitHub refused the request's content",
}


class ApiError(Exception):
    """A request that failed: a sentence without the token; ``status`` GitHub's HTTP status
    (None when it did not answer); ``transient`` whether the same request may succeed later
    (rate limits, 5xx, network) rather than never (404, 403, 422)."""

    def __init__(self, sentence: str, status: int | None = None, transient: bool = False):
        super().__init__(sentence)
        self.status = status
        self.transient = transient


class Api:
    """GitHub's REST API at ``base_url`` with ``token``. ``transport``: an httpx transport
    (tests); ``sleep`` and ``clock``: time.sleep and time.time unless tests give others."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_wait: float = MAX_WAIT,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("https", "http") or not parts.netloc:
            raise ApiError(BAD_API_URL.format(url=base_url))
        if not token:
            raise ApiError(NO_TOKEN)
        self.base = base_url.rstrip("/")
        self._token = token
        self._sleep, self._clock, self._max_wait = sleep, clock, max_wait
        headers = {
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {token}",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "t101-autograder",
        }
        self._client = httpx.Client(
            headers=headers, timeout=TIMEOUT, transport=transport, follow_redirects=False
        )

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def scrub(self, text: str) -> str:
        """text with the token replaced by ***, wherever it appears."""
        return text.replace(self._token, "***") if self._token else text

    def call(self, method: str, path: str, *, body: Any = None, params: dict | None = None) -> Any:
        """The JSON GitHub answers to METHOD path (None for an empty answer); ApiError."""
        return _decoded(self._send(method, path, body=body, params=params), method, path, self)

    def pages(self, path: str, params: dict | None = None) -> Iterator[Any]:
        """Every item of a listing, page after page (ApiError, also midway)."""
        url, query = path, {"per_page": 100, **(params or {})}
        while url:
            response = self._send("GET", url, params=query)
            yield from _decoded(response, "GET", path, self) or []
            url, query = self._next_page(response, path), None

    def _next_page(self, response: httpx.Response, path: str) -> str:
        link = response.links.get("next", {}).get("url", "")
        if not link:
            return ""
        here, there = urlsplit(self.base), urlsplit(link)
        if (there.scheme, there.netloc) != (here.scheme, here.netloc):
            where = f"{there.scheme}://{there.netloc}"
            raise ApiError(self.scrub(FOREIGN_LINK.format(path=path, where=where, base=self.base)))
        return link

    def _send(
        self, method: str, path: str, *, body: Any = None, params: dict | None = None
    ) -> httpx.Response:
        url = path if path.startswith(("https://", "http://")) else self.base + path
        shown = urlsplit(url).path
        waited, tries = 0.0, 0
        while True:
            tries += 1
            try:
                response = self._client.request(method, url, json=body, params=params)
                wait = rate_limit_wait(response, tries, self._clock())
                if wait is None and response.status_code < 500:
                    return _checked(response, method, shown, self)
                if wait is None:
                    wait = SERVER_WAIT * 2 ** (tries - 1)
                failure = ApiError(
                    self.scrub(_answered(response, method, shown)), response.status_code, True
                )
            except httpx.HTTPError as error:
                detail = self.scrub(f"{type(error).__name__}: {error}")
                failure = ApiError(
                    UNREACHABLE.format(base=self.base, method=method, path=shown, detail=detail),
                    transient=True,
                )
                wait = SERVER_WAIT * 2 ** (tries - 1)
            if tries >= MAX_TRIES or waited + wait > self._max_wait:
                if failure.status in (403, 429):
                    sentence = GAVE_UP.format(
                        method=method, path=shown, tries=tries, waited=waited, wait=wait
                    )
                    raise ApiError(sentence, failure.status, transient=True)
                raise failure
            self._sleep(wait)
            waited += wait


def rate_limit_wait(response: httpx.Response, tries: int, now: float) -> float | None:
    """Seconds to wait before trying again when ``response`` says a rate limit was hit (the
    ``tries``-th try, at ``now`` epoch seconds); None when it is not a rate limit."""
    if response.status_code not in (403, 429):
        return None
    headers = response.headers
    retry_after = _number(headers.get("retry-after"))
    if retry_after is not None:
        return max(retry_after, 1.0)
    reset = _number(headers.get("x-ratelimit-reset"))
    if headers.get("x-ratelimit-remaining") == "0" and reset is not None:
        return max(reset - now, 1.0)
    if response.status_code == 429 or "rate limit" in response.text.lower():
        return SECONDARY_WAIT * 2 ** (tries - 1)
    return None


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _answered(response: httpx.Response, method: str, path: str) -> str:
    """ANSWERED for a failed response: GitHub's own message, and what it usually means."""
    try:
        message = str(response.json().get("message", "")).strip()
    except (ValueError, AttributeError):
        message = ""
    message = (message or response.reason_phrase or "no message")[:300]
    hint = HINTS.get(response.status_code)
    text = f"{message} ({hint})" if hint else message
    status = f"{response.status_code} {response.reason_phrase}".strip()
    return ANSWERED.format(status=status, method=method, path=path, message=text).rstrip(".") + "."


def _checked(response: httpx.Response, method: str, path: str, api: Api) -> httpx.Response:
    if response.is_success:
        return response
    raise ApiError(api.scrub(_answered(response, method, path)), response.status_code)


def _decoded(response: httpx.Response, method: str, path: str, api: Api) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError as error:
        raise ApiError(api.scrub(NOT_JSON.format(method=method, path=path, detail=error))) from None
