"""A stand-in for GitHub's REST API: an HTTP server on 127.0.0.1 that records every request.

Each route is (method, path without the query string); its answers are queued: each request
takes the next, and the last one repeats. A handler function may answer instead (it gets the
Request). A request no route knows is answered 404 {"message": "Not Found"}, as GitHub does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Request], Answer]


class RecordingServer:
    """Start with ``with RecordingServer() as server``; ``server.url`` is its base URL."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._routes: dict[tuple[str, str], list[Answer] | Handler] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def answer(self, method: str, path: str, *answers: Answer) -> None:
        """Queue answers for METHOD path (the last one repeats)."""
        self._routes[(method, path)] = list(answers)

    def handle(self, method: str, path: str, handler: Handler) -> None:
        self._routes[(method, path)] = handler

    def made(self, method: str | None = None, path: str | None = None) -> list[Request]:
        """The requests recorded, of one method and path when given."""
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (path is None or r.path == path)
        ]

    def _respond(self, request: Request) -> Answer:
        with self._lock:
            self.requests.append(request)
            route = self._routes.get((request.method, request.path))
            if route is None:
                return Answer(404, {"message": "Not Found"})
            if callable(route):
                return route(request)
            return route.pop(0) if len(route) > 1 else route[0]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class _Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                request = Request(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=json.loads(raw) if raw else None,
                )
                answer = server._respond(request)
                data = b"" if answer.body is None else json.dumps(answer.body).encode()
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value.replace("{url}", server.url))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _serve

            def log_message(self, format: str, *args: object) -> None:
                pass  # quiet: the test reads server.requests

        return _Handler
