"""``/ws``: who may follow the event stream, what a client gets on connect, a sender that never waits long.

Why this shape: every connection costs the server memory for as long as it lasts, and a client
that stops reading would otherwise hold it for ever. So each connection has one bounded queue
(``events.Subscription``: events and bytes) and one sender, this module's loop, which gives
every send :attr:`~dicetower.firmware.server.app.ServerConfig.send_timeout_s`. A client whose
queue overflows or whose send stalls is closed with code 1013 ("fell behind" / "too slow"), its
queue freed; it reconnects with ``?since=`` and catches up from the ring, as after any drop.
What is sent is bounded too: events carry bounded roll documents (``views.event_view``), and
the snapshot on connect is cut to :attr:`snapshot_bytes` (oldest rolls dropped first) and built
at most once a second for all the clients that connect (``Snapshots``).

The stream needs the token exactly when rolling does (``guards.require_token``): as
``Authorization: Bearer TOKEN`` (scripts), or, since a browser cannot set headers on a
WebSocket, as the subprotocol ``bearer.TOKEN`` beside ``dicetower`` (the overlay takes the token
from its URL's fragment, ``/overlay#token=TOKEN``, which the browser never sends to a server
or writes to a log). The server answers with the subprotocol ``dicetower`` and never echoes
the token. Not the query string: query strings end up in access logs and proxies' logs.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import time
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..events import EventBus
from ..rolllog import RollLog
from ..rolls.views import event_view, roll_view
from ..web.security import token_matches
from .errors import error_response

if TYPE_CHECKING:
    from .app import ServerState

__all__ = [
    "BEARER_PROTOCOL",
    "CLOSE_BEHIND",
    "SUBPROTOCOL",
    "Snapshots",
    "ws_authorised",
    "ws_events",
]

#: the subprotocol the overlay asks for and the server answers with
SUBPROTOCOL = "dicetower"
#: the prefix of the subprotocol that carries the token (``bearer.TOKEN``)
BEARER_PROTOCOL = "bearer."
#: the close code for a client that fell behind or stalled: reconnect with ``since``
CLOSE_BEHIND = 1013
#: seconds a close frame may wait to be written; a peer that reads nothing never takes it
_CLOSE_WAIT_S = 1.0


class _Stalled(Exception):
    """A send took longer than the send timeout: the client is not reading."""


def ws_authorised(websocket: WebSocket, token: str | None) -> bool:
    """Whether the connection carries the server's token (always, when the server has none)."""
    if token is None:
        return True
    if "authorization" in websocket.headers:
        return token_matches(websocket.headers, token)
    for proto in websocket.scope.get("subprotocols") or ():
        if isinstance(proto, str) and proto.startswith(BEARER_PROTOCOL):
            return hmac.compare_digest(proto[len(BEARER_PROTOCOL) :].encode(), token.encode())
    return False


class Snapshots:
    """The ``snapshot`` a client that must rebuild its state is sent, at most ``max_bytes`` of JSON.

    The last ``rolls`` finished rolls (bounded documents) and the pending ones, newest kept
    first when they do not all fit. Built at most once every ``max_age_s`` seconds, however
    many clients connect and however fast events come: reading the last rolls back from the log
    takes tens of milliseconds when some are large (two ``1000d1000`` among twenty: about 80 ms),
    and a hundred clients that connect while rolls pour in would otherwise cost a read each.
    A client given a snapshot older than the last event is sent the events after it from the
    ring (:meth:`EventBus.replay`), so it misses nothing.
    """

    def __init__(
        self,
        log: RollLog,
        bus: EventBus,
        *,
        rolls: int = 20,
        max_bytes: int = 256 * 1024,
        max_age_s: float = 1.0,
    ) -> None:
        self.log = log
        self.bus = bus
        self.rolls = rolls
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self.builds = 0  #: how many times the snapshot was built (read back from the log)
        self._lock = asyncio.Lock()
        self._cached: tuple[int, str] | None = None
        self._built_at = 0.0

    async def text(self, *, fresh: bool = False) -> tuple[int, str]:
        """The snapshot's sequence number and its JSON: the cached one while it is the latest or
        younger than ``max_age_s`` (unless ``fresh``); events after its number are in the ring."""
        async with self._lock:
            seq = self.bus.seq  # read first: anything later comes as events
            cached = self._cached
            if cached is not None:
                young = time.monotonic() - self._built_at < self.max_age_s
                if cached[0] == seq or (young and not fresh):
                    return cached
            rows = await run_in_threadpool(self.log.list, limit=self.rolls)
            pending = await run_in_threadpool(self.log.pending)
            self._cached = (seq, self._build(seq, rows, pending))
            self._built_at = time.monotonic()
            self.builds += 1
            return self._cached

    def _build(self, seq: int, rows: list[dict[str, Any]], pending: list[dict[str, Any]]) -> str:
        head = {"type": "snapshot", "epoch": self.bus.epoch, "seq": seq}
        room = self.max_bytes - len(json.dumps({**head, "rolls": [], "pending": []}))
        kept_pending: list[str] = []
        for p in pending:  # in queue order: the next to roll first
            text = json.dumps(roll_view(p), separators=(",", ":"))
            if len(text) + 1 > room:
                break
            kept_pending.append(text)
            room -= len(text) + 1
        kept_rolls: list[str] = []
        for r in rows:  # newest first
            text = json.dumps(event_view(roll_view(r)), separators=(",", ":"))
            if len(text) + 1 > room:
                break
            kept_rolls.append(text)
            room -= len(text) + 1
        prefix = json.dumps(head, separators=(",", ":"))[:-1]
        return f'{prefix},"rolls":[{",".join(reversed(kept_rolls))}],"pending":[{",".join(kept_pending)}]}}'


async def _send(websocket: WebSocket, text: str, timeout: float) -> None:
    # asyncio.timeout, not wait_for: no task a send, and there is one send per event per client
    try:
        async with asyncio.timeout(timeout):
            await websocket.send_text(text)
    except TimeoutError:
        raise _Stalled from None


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    """Close, but give up after a moment: a peer that reads nothing never takes the close frame."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(_CLOSE_WAIT_S):
            await websocket.close(code=code, reason=reason)


async def _deny(websocket: WebSocket, status: int, message: str, field_name: str | None = None) -> None:
    """Refuse the handshake with the API's JSON error (a close where the server cannot send one)."""
    try:
        await websocket.send_denial_response(error_response(status, message, field_name))
    except RuntimeError:
        await websocket.close(code=1008, reason=message[:120])


async def ws_events(websocket: WebSocket) -> None:
    """The event stream: a snapshot or a replay, then every event, each send bounded in time."""
    state: ServerState = websocket.state.server
    bus: EventBus = state.bus
    config = state.config
    q = websocket.query_params
    if not ws_authorised(websocket, state.token):
        await _deny(
            websocket,
            401,
            "this server needs its token: Authorization: Bearer TOKEN, or the subprotocol bearer.TOKEN",
            "authorization",
        )
        return
    if bus.clients >= config.max_ws_clients:
        await _deny(websocket, 503, f"{bus.clients} clients are following the stream; try again shortly")
        return
    try:
        since = int(q["since"]) if q.get("since") else None
        last = max(0, min(int(q.get("last", config.replay_last)), bus.history))
    except ValueError:
        await _deny(websocket, 400, "since and last must be whole numbers", "since")
        return
    offered = websocket.scope.get("subprotocols") or ()
    await websocket.accept(subprotocol=SUBPROTOCOL if SUBPROTOCOL in offered else None)
    sub = bus.subscribe()  # before anything is read: no event can slip between replay and live

    async def watch_close() -> None:
        with contextlib.suppress(Exception):
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
        sub.end()

    watcher = asyncio.create_task(watch_close())
    timeout = config.send_timeout_s
    sent = 0
    try:
        replay = bus.replay(since, q.get("epoch"), last)
        if replay is None or since is None:
            sent, snapshot = await state.snapshots.text()
            after = bus.replay(sent, bus.epoch, 0)  # what a snapshot built a moment ago does not hold
            if after is None:  # the ring no longer reaches back to it: build one now
                sent, snapshot = await state.snapshots.text(fresh=True)
                after = bus.replay(sent, bus.epoch, 0) or []
            await _send(websocket, snapshot, timeout)
            replay = [e for e in (replay or []) if e.seq <= sent] + after  # history before it, events after
        await _send(websocket, json.dumps({"type": "hello", "epoch": bus.epoch, "seq": bus.seq}), timeout)
        for event in replay:
            await _send(websocket, event.text, timeout)
            sent = max(sent, event.seq)
        while True:
            event = await sub.next()
            if event is None:
                if sub.overflowed:
                    bus.dropped += 1
                    await _close(websocket, CLOSE_BEHIND, "fell behind: reconnect with since")
                break
            if event.seq <= sent:
                continue
            await _send(websocket, event.text, timeout)
            sent = event.seq
    except _Stalled:
        bus.dropped += 1
        await _close(websocket, CLOSE_BEHIND, "too slow: reconnect with since")
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass  # the client went away: a normal end
    finally:
        bus.unsubscribe(sub)
        watcher.cancel()
