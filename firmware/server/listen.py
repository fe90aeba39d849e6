"""How ``dicetower serve`` listens: uvicorn's settings, and a socket that lets go of peers who stop reading.

Why not ``uvicorn.run(app, host=..., port=...)``: its defaults trust ``X-Forwarded-For`` from
loopback (any local process, or a proxy the owner never named, could set the client address), accept
16 MiB WebSocket messages on a stream that only ever reads a close frame, compress every
event once per client, and pick the HTTP parser by what happens to be installed (``httptools``,
if present, reads request headers of any length). Here the parser is always h11, which holds at
most :data:`MAX_HEADER_BYTES` of a request line and headers it has not finished reading (what
arrives in one read, up to 64 KiB, is parsed whole), and at most :data:`MAX_CONNECTIONS`
connections and tasks are served at once (one more request is answered 503).

And a peer that stops reading keeps its connection, and the bytes queued for it, for as long as
it keeps acknowledging TCP's window probes: closing it from the app waits for a buffer that
never drains. A listening socket with ``TCP_USER_TIMEOUT`` hands
that timeout to every connection it accepts, so the kernel drops a peer that has not taken a
byte for :data:`STALLED_PEER_S` seconds and uvicorn frees what it held. It hands down a fixed
send buffer too (:data:`SEND_BUFFER_BYTES`): left to itself the kernel grows a connection's
send buffer to 4 MiB, which a peer that stops reading fills before the server notices anything.

And before it starts, the server asks glibc for at most :data:`MALLOC_ARENAS` malloc arenas
(unless ``MALLOC_ARENA_MAX`` is set): by default each thread that allocates may get an arena of
its own, and the roll worker's threads and the event loop's buffers for hundreds of clients leave
each arena fragmented; under the load bench that is the difference between 160 and 240 MB.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import platform
import socket
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import ASGIApp

__all__ = [
    "MALLOC_ARENAS",
    "MAX_CONNECTIONS",
    "MAX_HEADER_BYTES",
    "SEND_BUFFER_BYTES",
    "STALLED_PEER_S",
    "WS_MAX_INCOMING",
    "ListenError",
    "bind_listener",
    "limit_malloc_arenas",
    "listening_socket",
    "serve",
    "tls_files",
    "uvicorn_config",
]

#: seconds a connection may sit with unsent bytes that its peer does not take before the kernel drops it
STALLED_PEER_S = 30.0
#: the largest WebSocket message a client may send (``/ws`` reads nothing but a close)
WS_MAX_INCOMING = 4096
#: the send buffer asked for each connection (Linux doubles it): a LAN's bandwidth-delay product
SEND_BUFFER_BYTES = 128 * 1024
#: bytes of a request line and headers h11 holds unfinished (its incomplete-event bound); more is a 400
MAX_HEADER_BYTES = 16 * 1024
#: connections and request tasks at once (uvicorn's ``limit_concurrency``): 500 /ws clients, room for the API
MAX_CONNECTIONS = 1024
#: malloc arenas the server process uses (glibc), unless ``MALLOC_ARENA_MAX`` says otherwise
MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  #: ``mallopt``'s parameter number for the arena count (glibc's malloc.h)


def uvicorn_config(app: ASGIApp, host: str, port: int, **overrides: Any) -> uvicorn.Config:
    """uvicorn settings: no proxy headers (``clients.py`` reads them), h11 with bounded headers, small
    bounded WebSockets."""
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "warning",
        "http": "h11",
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "limit_concurrency": MAX_CONNECTIONS,
        "timeout_keep_alive": 5,
        "ws": "websockets-sansio",
        "proxy_headers": False,
        "server_header": False,
        "ws_max_size": WS_MAX_INCOMING,
        "ws_per_message_deflate": False,
        "ws_ping_interval": 20.0,
        "ws_ping_timeout": 20.0,
        **overrides,
    }
    return uvicorn.Config(app, **options)


def listening_socket(
    host: str,
    port: int,
    *,
    stalled_peer_s: float = STALLED_PEER_S,
    send_buffer_bytes: int = SEND_BUFFER_BYTES,
) -> socket.socket:
    """A bound TCP socket for ``host:port`` whose accepted connections time out once their peer stalls.

    ``TCP_USER_TIMEOUT`` (Linux) and ``SO_SNDBUF`` are inherited by every accepted socket: the
    first bounds both unacknowledged data and the window probes of a peer that reads nothing,
    the second the bytes the kernel holds for it. Where ``TCP_USER_TIMEOUT`` does not exist the
    socket is returned without it.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if send_buffer_bytes > 0:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer_bytes)
        user_timeout = getattr(socket, "TCP_USER_TIMEOUT", None)
        if user_timeout is not None and stalled_peer_s > 0:
            sock.setsockopt(socket.IPPROTO_TCP, user_timeout, int(stalled_peer_s * 1000))
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class ListenError(OSError):
    """The server cannot listen where it was asked to: the message names the address and what to do."""


#: what to do when binding fails, by errno: the address is taken, the port is privileged, the
#: address is not this machine's
_BIND_ADVICE = {
    errno.EADDRINUSE: "the port is in use: give another --port, or stop the process that listens on it"
    " (ss -ltnp shows which)",
    errno.EACCES: "permission denied: ports below 1024 need root or CAP_NET_BIND_SERVICE; give --port 1024"
    " or higher",
    errno.EADDRNOTAVAIL: "this machine has no such address: give --host one of its addresses, 127.0.0.1,"
    " or 0.0.0.0 for all",
}


def bind_listener(host: str, port: int) -> socket.socket:
    """:func:`listening_socket`, or :class:`ListenError` naming ``host:port`` and what to do instead.

    The server binds before it says anything: "serving on" is printed only once the port is its own.
    """
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if not 0 <= port <= 65535:
        raise ListenError(f"cannot listen on {where}: --port must be 0..65535")
    try:
        return listening_socket(host, port)
    except socket.gaierror as exc:
        raise ListenError(
            f"cannot listen on {where}: {host!r} is not an address of this machine ({exc.strerror});"
            " give --host an IP address, 127.0.0.1, or 0.0.0.0 for all"
        ) from None
    except OSError as exc:
        refused = ListenError(f"cannot listen on {where}: {_BIND_ADVICE.get(exc.errno or 0, exc.strerror)}")
        refused.errno = exc.errno
        raise refused from None


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's server that calls ``announce`` once the app has started and the socket is served."""

    def __init__(self, config: uvicorn.Config, announce: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._announce = announce

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._announce is not None:
            self._announce()


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Ask glibc for at most ``arenas`` malloc arenas; whether it was asked (glibc only, no override set).

    Call it before threads start: a thread keeps the arena it first allocated in.
    """
    if os.environ.get("MALLOC_ARENA_MAX") or platform.libc_ver()[0] != "glibc":
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    return bool(ctypes.CDLL(name).mallopt(_M_ARENA_MAX, arenas))


def tls_files(cert: Path | None, key: Path | None) -> dict[str, str] | None:
    """uvicorn's TLS settings for ``--tls-cert`` and ``--tls-key`` (both or neither), checked before anything
    starts: each must be a readable file, and the pair must load as a certificate and its key."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ValueError("--tls-cert and --tls-key go together: give the certificate and its private key")
    for flag, path in (("--tls-cert", cert), ("--tls-key", key)):
        if not path.is_file():
            raise ValueError(f"{flag} {path}: no such file")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(str(cert), str(key))
    except (ssl.SSLError, OSError) as exc:
        raise ValueError(f"--tls-cert {cert}, --tls-key {key}: not a certificate and key ({exc})") from None
    return {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}


def serve(
    app: ASGIApp,
    host: str,
    port: int,
    *,
    announce: Callable[[int], None] | None = None,
    tls: dict[str, str] | None = None,
) -> None:
    """Run ``app`` under uvicorn on ``host:port`` until interrupted (blocking); https with ``tls``
    (:func:`tls_files`).

    The socket is bound first (:func:`bind_listener`: a port in use fails with what to do), and
    ``announce`` is called with the bound port (``--port 0`` picks one) only once the app's lifespan
    has started and the socket is served: nothing says "serving" before it is.
    """
    limit_malloc_arenas()
    sock = bind_listener(host, port)
    bound = int(sock.getsockname()[1])
    try:
        on_start = None if announce is None else functools.partial(announce, bound)
        _AnnouncingServer(uvicorn_config(app, host, port, **(tls or {})), on_start).run(sockets=[sock])
    finally:
        sock.close()
