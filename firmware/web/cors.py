"""Cross-origin requests for the browser clients a tower owner names (a Foundry VTT world, docs/foundry.md).

Off unless origins are named: a page from any other origin gets no CORS headers, so a visitor's browser
will not hand it the tower's answers, and cannot send it a JSON roll request (a non-simple request whose
preflight fails). Each origin is a scheme, host and optional port, exactly as a browser sends it in
``Origin``; anything else (a path, a wildcard, another scheme) is refused at start-up with the reason, because
a mistyped origin would silently never match. Credentials (cookies) are never allowed: the token travels in
the ``Authorization`` header, which the preflight allows.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

__all__ = ["MAX_ORIGINS", "check_cors_origins", "cors_middleware", "parse_origins"]

#: origins one server may name (a few worlds, not a list to search)
MAX_ORIGINS = 32


def parse_origins(values: Iterable[str]) -> tuple[str, ...]:
    """The origins given (options or a comma-separated environment value), checked and normalised.

    Raises ValueError naming the first origin that is not ``http(s)://host[:port]``.
    """
    origins: list[str] = []
    for raw in values:
        for value in str(raw).split(","):
            value = value.strip()
            if not value:
                continue
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(
                    f"CORS origin {value!r}: give scheme and host, e.g. https://foundry.example.org"
                )
            extra = parts.query or parts.fragment or parts.username or parts.password
            if parts.path not in ("", "/") or extra:
                raise ValueError(f"CORS origin {value!r}: an origin is scheme, host and port only (no path)")
            try:
                port = parts.port
            except ValueError as exc:
                raise ValueError(f"CORS origin {value!r}: {exc}") from None
            host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
            origin = f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
            if origin not in origins:
                origins.append(origin)
    if len(origins) > MAX_ORIGINS:
        raise ValueError(f"{len(origins)} CORS origins; at most {MAX_ORIGINS}")
    return tuple(origins)


def check_cors_origins(value: object) -> tuple[str, ...]:
    """The config key ``[server] cors_origins``: a list of origins, each checked."""
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValueError('a list of origins, e.g. ["https://foundry.example.org:30000"]')
    return parse_origins(str(v) for v in value)


def cors_middleware(origins: tuple[str, ...]) -> list[Middleware]:
    """The middleware that answers those origins (none when no origin is named)."""
    if not origins:
        return []
    return [
        Middleware(
            CORSMiddleware,
            allow_origins=list(origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
            allow_credentials=False,
            max_age=600,
        )
    ]
