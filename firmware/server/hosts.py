"""The Host check every server runs (``dicetower serve``, ``dicetower hub``): a request that names
another host is refused before any route sees it.

Why (:mod:`.host_names` has the whole argument): a web page elsewhere can reach a server on
loopback by DNS rebinding, and then the token-free loopback API would roll, name a teach folder's
dice and stream events for it. The page cannot choose the ``Host`` header, so refusing names that
are not this server's shuts it out. An HTTP request is answered ``421 Misdirected Request`` with
the API's JSON error (inside the headers middleware, so with the safe headers); a WebSocket
handshake gets the same answer where the ASGI server can send one, else a 1008 close. CORS stays
off: no route sends ``Access-Control-Allow-Origin``, so a page elsewhere can read nothing either.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from .errors import error_response
from .host_names import AllowedHosts

__all__ = ["MISDIRECTED", "HostCheckMiddleware"]

#: the status of a request for another host (RFC 9110 §15.5.20: "Misdirected Request")
MISDIRECTED = 421
#: characters of the refused Host header quoted back in the message
_QUOTED = 80


class HostCheckMiddleware:
    """Answers a request whose ``Host`` is not one of ``allowed``'s names with 421, JSON."""

    def __init__(self, app: ASGIApp, allowed: AllowedHosts) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host")
        if self.allowed.allows(host):
            await self.app(scope, receive, send)
            return
        shown = "no Host header" if host is None else f"Host {host[:_QUOTED]!r}"
        message = (
            f"{shown} is not a name of this server: open it as localhost, by this machine's name or"
            " address, or add the name with --allowed-host (DICETOWER_ALLOWED_HOSTS, [server] allowed_hosts)"
        )
        response = error_response(MISDIRECTED, message, "host")
        if scope["type"] == "http":
            await response(scope, receive, send)
            return
        websocket = WebSocket(scope, receive, send)
        try:
            await websocket.send_denial_response(response)
        except RuntimeError:  # the ASGI server cannot answer a handshake with HTTP
            await websocket.close(code=1008, reason=f"{shown} is not a name of this server"[:120])
