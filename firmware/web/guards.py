"""What every endpoint that changes something does first: refuse with :class:`ApiError`, check the
bearer token, read a JSON body.

Why a module of its own: the roll endpoints (``app.py``) and the teach endpoints (``teach.py``)
guard their changes the same way, and one copy of the token check is one place to get it right.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from .security import token_matches

__all__ = ["MAX_JSON_DEPTH", "ApiError", "json_body", "json_depth", "require_token"]

#: deepest nesting of arrays and objects a request body may have (a roll needs 2)
MAX_JSON_DEPTH = 32


class ApiError(Exception):
    """A request the API refuses: ``status``, the ``field`` at fault (if any) and a message."""

    def __init__(self, status: int, message: str, *, field_name: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field_name
        self.extra = extra


def require_token(request: Request, token: str | None) -> None:
    """Refuse (401) unless the request carries ``token``, the server's, when the server has one.

    The lifespan makes a token only when one is required (beyond loopback, or
    ``--require-token``); None means any local caller may act.
    """
    if token is None:
        return
    if "authorization" not in request.headers:
        raise ApiError(401, "this server needs Authorization: Bearer TOKEN", field_name="authorization")
    if not token_matches(request.headers, token):
        raise ApiError(401, "the bearer token is not this server's token", field_name="authorization")


async def json_body(request: Request, what: str) -> Any:
    """The request's JSON body; ``what`` names it in the refusal (``send the roll as ...``)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise ApiError(415, f"send {what} as application/json", field_name="content-type")
    raw = await request.body()
    depth = json_depth(raw)
    if depth > MAX_JSON_DEPTH:
        raise ApiError(400, f"body is nested deeper than {MAX_JSON_DEPTH} levels", field_name="body")
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ApiError(400, f"body is not valid JSON: {str(exc)[:200]}", field_name="body") from None


def _no_constant(name: str) -> Any:
    """``NaN`` and ``Infinity`` are not JSON, though Python's decoder takes them by default."""
    raise ValueError(f"{name} is not a JSON number")


_OPEN, _CLOSE, _QUOTE, _BACKSLASH = frozenset(b"[{"), frozenset(b"]}"), ord('"'), ord("\\")


def json_depth(raw: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``raw``, outside strings (no decoding).

    Why before decoding: the decoder recurses once a level, so 8,000 ``[`` end in a
    ``RecursionError`` deep inside it; counting first refuses such a body in linear time.
    """
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == _BACKSLASH:
                escaped = True
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif byte in _CLOSE:
            depth -= 1
    return deepest
