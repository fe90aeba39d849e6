"""Every refusal and failure of the API as one JSON shape: ``{"error": {"status", "field", "message"}}``.

Why one module: Starlette answers an exception that nothing handles with a plain-text 500 from
its outermost middleware, which sits outside the middleware that adds the Content-Security-Policy.
:class:`InternalErrorMiddleware` sits inside the headers middleware and turns anything unexpected
into the same JSON as a refusal, so even a bug answers with the safe headers and without a page
of traceback. The exception handlers map the known refusals (:class:`ApiError`, a bad request
field, a full queue, a body over the limit, Starlette's own 404/405) once, keyed by base class.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .guards import ApiError
from .rolling import RequestFieldError
from .rollqueue import QueueFullError
from .security import BodyTooLargeError

__all__ = ["EXCEPTION_HANDLERS", "InternalErrorMiddleware", "error_response"]

log = logging.getLogger(__name__)

#: the longest request path quoted in the log line of an internal error
_LOGGED_PATH = 200


def error_response(status: int, message: str, field_name: str | None = None, **extra: Any) -> JSONResponse:
    """The API's error document; ``retry_after`` in ``extra`` also sets the ``Retry-After`` header."""
    body: dict[str, Any] = {"status": status, "field": field_name, "message": message, **extra}
    headers = {"Retry-After": str(extra["retry_after"])} if "retry_after" in extra else None
    return JSONResponse({"error": body}, status_code=status, headers=headers)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message, exc.field, **exc.extra)


async def _field_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestFieldError)
    # position: the 0-based offset code indexes with; column: the 1-based count the message says
    extra = {"position": exc.position, "column": exc.position + 1} if exc.position is not None else {}
    return error_response(exc.status, exc.message, exc.field, **extra, **exc.extra)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, str(exc.detail))


async def _too_large(request: Request, exc: Exception) -> Response:
    return error_response(413, str(exc), "body")


async def _queue_full(request: Request, exc: Exception) -> Response:
    return error_response(503, str(exc), retry_after=1)


#: what ``Starlette(exception_handlers=...)`` gets: each refusal the API knows, by base class
EXCEPTION_HANDLERS = {
    ApiError: _api_error,
    RequestFieldError: _field_error,
    HTTPException: _http_error,
    BodyTooLargeError: _too_large,
    QueueFullError: _queue_full,
}


class InternalErrorMiddleware:
    """Answers an unhandled exception with a JSON 500 (inside the headers middleware: CSP and all).

    The traceback goes to the log once, because an exception that reaches here is a bug; the
    client learns only that the server failed. If the response had already started, nothing
    more can be sent: the connection is ended. A client that went away before its body arrived
    (Starlette's ``ClientDisconnect``) is no bug and has no one to answer: it is a debug line,
    so a flaky network or a closed tab leaves no traceback in the log.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except ClientDisconnect:
            path = str(scope.get("path", ""))[:_LOGGED_PATH]
            log.debug("the client went away before its body arrived: %s %r", scope.get("method"), path)
        except Exception:
            path = str(scope.get("path", ""))[:_LOGGED_PATH]
            log.exception("internal error answering %s %r", scope.get("method"), path)
            if not started:
                response = error_response(500, "internal error: the server could not answer this request")
                await response(scope, receive, send)
