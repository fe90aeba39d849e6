"""The server's guards: the API token, per-client rate limits, safe headers, a body size cap.

The security model (``docs/server.md``): reading the log, the overlay and the fairness page
is open to whoever can reach the server; rolling and tower control need
``Authorization: Bearer TOKEN`` whenever the server listens beyond loopback (and on
loopback too with ``--require-token``). The token is made on first start, stored 0600 in
the data directory, and printed once.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import time
from pathlib import Path

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...vision.files import read_bounded

__all__ = [
    "MAX_TOKEN_BYTES",
    "BodyLimitMiddleware",
    "BodyTooLargeError",
    "RateLimiter",
    "SecurityHeadersMiddleware",
    "is_loopback",
    "load_or_create_token",
    "token_matches",
]

TOKEN_FILE = "api-token"
#: The token file is read up to this long (a token is 43 characters).
MAX_TOKEN_BYTES = 4096

#: the Content-Security-Policy every page gets: nothing but this server's own files
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
)

_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"SAMEORIGIN"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_or_create_token(data_dir: Path, name: str = TOKEN_FILE) -> tuple[str, bool]:
    """The API token (or another code kept as ``name``, the players' table code) and whether it
    was just created (mode 0600, never rewritten)."""
    path = Path(data_dir) / name
    try:
        token = read_bounded(path, MAX_TOKEN_BYTES).decode("utf-8", errors="replace").strip()
        if token:
            return token, False
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    os.chmod(path, 0o600)
    return token, True


def token_matches(headers: Headers, token: str) -> bool:
    given = headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode())


class RateLimiter:
    """A token bucket per client: ``burst`` rolls at once, then ``per_second`` sustained.

    Bounded: at most ``max_clients`` buckets are kept (the stalest are forgotten first).
    ``per_second <= 0`` turns the limit off.
    """

    def __init__(self, per_second: float = 2.0, burst: int = 10, *, max_clients: int = 4096) -> None:
        self.per_second = per_second
        self.burst = burst
        self.max_clients = max_clients
        self._buckets: dict[str, tuple[float, float]] = {}

    def allow(self, client: str, now: float | None = None) -> float:
        """0 if the roll may go ahead, else the seconds to wait."""
        if self.per_second <= 0:
            return 0.0
        now = time.monotonic() if now is None else now
        tokens, last = self._buckets.pop(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.per_second)
        if tokens >= 1:
            self._buckets[client] = (tokens - 1, now)
            wait = 0.0
        else:
            self._buckets[client] = (tokens, now)
            wait = (1 - tokens) / self.per_second
        while len(self._buckets) > self.max_clients:
            del self._buckets[next(iter(self._buckets))]
        return wait


class BodyTooLargeError(ValueError):
    """A request body over the server's limit."""


class BodyLimitMiddleware:
    """Refuses request bodies over ``max_bytes`` (413), by Content-Length and while streaming."""

    def __init__(self, app: ASGIApp, max_bytes: int = 16 * 1024) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await _too_large(send, self.max_bytes)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLargeError(f"request body is over {self.max_bytes} bytes")
            return message

        await self.app(scope, limited, send)


async def _too_large(send: Send, limit: int) -> None:
    body = (
        b'{"error":{"status":413,"field":"body","message":"request body is over '
        + str(limit).encode()
        + b' bytes"}}'
    )
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class SecurityHeadersMiddleware:
    """Adds the CSP and the usual safe headers to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    h for h in _HEADERS if h[0] not in names
                ]
            await send(message)

        await self.app(scope, receive, with_headers)
