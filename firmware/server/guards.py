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

__all__ = ["ApiError", "json_body", "require_token"]


class ApiError(Exception):
    """A request the API refuses: ``status``, the ``field`` at fault (if any) and a message."""

    def __init__(self, status: int, message: str, *, field_name: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field_name
        self.extra = extra


def require_token(request: Request) -> None:
    """Refuse (401) unless the request carries the server's token, when the server has one.

    The lifespan sets ``request.state.token`` only when a token is required (beyond loopback,
    or ``--require-token``); None means any local caller may act.
    """
    token = request.state.token
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
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"body is not valid JSON: {exc}", field_name="body") from None
