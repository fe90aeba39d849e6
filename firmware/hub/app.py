"""The hub's Starlette app: the overlay of every tower, the towers page, the combined log, and
roll requests sent to a chosen tower.

``create_hub_app(config)``: the lifespan opens the hub's log (:class:`~.store.HubStore`), its
event bus and its broker connection, and runs two tasks: one takes messages in order, one
sweeps for missing rolls every few seconds. Routes::

    GET  /overlay                    every tower's rolls (an OBS Browser source; ?rolls=&theme=&scale=)
    GET  /towers                     the towers, their state and chain; the roll control; the log
    GET  /api/towers                 the same as JSON, with the log's size and cap
    GET  /api/log?limit=&tower=      the combined log, newest first, each with its check
    GET  /api/problems               chain breaks, gaps and refused messages
    POST /api/towers/{name}/rolls    {"roll": {...}, "token": "..."} → 202 request id
    POST /api/towers/{name}/trust    {"fingerprint": "..."}: pin a new tower's key
    GET  /api/requests/{id}          what the tower answered
    WS   /ws                         a snapshot, then result / tower / chain / reply events

Beyond loopback, the POSTs need the hub's own bearer token (created on first start, as
``dicetower serve`` does); a tower's token, when it needs one, travels in the body.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..events import EventBus
from ..mqtt.client import Connection
from ..mqtt.settings import Topics, check_tower_name
from ..mqtt.wire import event_view
from ..web.guards import ApiError, json_body, require_token
from ..web.host_names import AllowedHosts
from ..web.hosts import HostCheckMiddleware
from ..web.overlay_theme import check_theme
from ..web.security import (
    CSP,
    BodyLimitMiddleware,
    RateLimiter,
    SecurityHeadersMiddleware,
    is_loopback,
    load_or_create_token,
)
from .core import HUB_EVENTS, Hub
from .keys import KeyRing
from .store import DEFAULT_LOG_CAP_MB, HubStore
from .subscriber import HubLink

__all__ = ["HubConfig", "create_hub_app"]

#: how often the hub looks for towers whose last rolls it lacks
SWEEP_S = 5.0


@dataclass
class HubConfig:
    """Everything ``dicetower hub`` decides before the app starts."""

    data_dir: Path
    connection: Connection
    prefix: str = "dicetower"
    hub_id: str = ""
    host: str = "127.0.0.1"
    port: int = 8090
    backfill: int = 100
    snapshot_rolls: int = 30
    require_token: bool | None = None
    client_queue: int = 1024
    #: the combined log's cap on disk (``--log-cap-mb``; :func:`~.store.log_cap_bytes`)
    log_cap_bytes: int | None = int(DEFAULT_LOG_CAP_MB * 2**20)
    #: names a request's Host may give besides loopback and this machine's (``web/host_names.py``)
    allowed_hosts: tuple[str, ...] = ()
    #: towers' public keys pinned by the hub's keys file (name to ``ed25519:...``)
    tower_keys: dict[str, str] = field(default_factory=dict)
    #: pin a new tower's first correctly signed key without asking (a broker whose ACL holds
    #: each tower to its own topics)
    trust_first_use: bool = False
    #: take unsigned events (a broker whose ACL alone is trusted; the load benchmark's baseline)
    accept_unsigned: bool = False

    @property
    def identity(self) -> str:
        """Who the hub is on the broker: its user name, else its client id (the last level of
        the request and resend topics it publishes on, which the ACL checks)."""
        return self.connection.username or self.connection.broker.username or f"dicetower-hub-{self.hub_id}"

    @property
    def token_required(self) -> bool:
        return self.require_token if self.require_token is not None else not is_loopback(self.host)


def _error(status: int, message: str, field_name: str | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": {"status": status, "field": field_name, "message": message}}, status_code=status
    )


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _error(exc.status, exc.message, exc.field)


#: the tower's CSP, with images from the towers too (a roll's photos link to its tower)
PAGE_CSP = CSP.replace("img-src 'self' data:", "img-src 'self' data: http: https:")


def _page(name: str) -> Response:
    return FileResponse(_static(name), media_type="text/html", headers={"content-security-policy": PAGE_CSP})


def _static(name: str) -> Path:
    return Path(str(resources.files(__package__) / "static" / name))


async def index(request: Request) -> Response:
    return RedirectResponse("/towers", status_code=307)


async def favicon(request: Request) -> Response:
    return Response(status_code=204)  # browsers and OBS ask for one


async def overlay(request: Request) -> Response:
    check_theme(request.query_params)  # an unknown theme is a 400 naming the allowed, as the tower's
    return _page("overlay.html")


async def towers_page(request: Request) -> Response:
    return _page("towers.html")


async def api_towers(request: Request) -> Response:
    hub: Hub = request.state.hub
    link: HubLink = request.state.link
    size = await run_in_threadpool(request.state.store.size)
    return JSONResponse(
        {
            "towers": hub.towers_json(),
            "log": size,
            "new_towers": hub.keys.new_json(),
            "broker": {
                "url": request.state.config.connection.broker.describe(),
                "connected": link.connected,
                "error": link.error,
            },
            "counts": {
                **hub.counts,
                "dropped": link.dropped,
                "refused_towers": hub.book.refused,
                "refused_unknown": hub.keys.unknown_refused,
            },
        }
    )


def _log_entry(row: dict[str, Any]) -> dict[str, Any]:
    if row.get("thinned"):  # pruned under the cap: only its place in the chain is left
        view = {k: row[k] for k in ("tower", "seq", "roller", "finished_at")}
        view["thinned"] = True
    else:
        view = event_view(row["event"], row.get("corrections") or ())
    return {
        "tower": row["tower"],
        "seq": row["seq"],
        "received_at": row["received_at"],
        "check": row["verdict"],
        "check_problem": row["problem"],
        "roll": view,
    }


async def api_log(request: Request) -> Response:
    store: HubStore = request.state.store
    try:
        limit = int(request.query_params.get("limit", "50"))
    except ValueError:
        raise ApiError(400, "limit must be a whole number", field_name="limit") from None
    tower = request.query_params.get("tower") or None
    rows = await run_in_threadpool(store.recent, limit, tower=tower)
    return JSONResponse({"log": [_log_entry(r) for r in rows]})


async def api_problems(request: Request) -> Response:
    store: HubStore = request.state.store
    return JSONResponse({"problems": await run_in_threadpool(store.problems, 100)})


async def post_request(request: Request) -> Response:
    require_token(request, request.state.token)
    state = request.state
    name = request.path_params["name"]
    try:
        check_tower_name(name)
    except ValueError as exc:
        raise ApiError(404, f"no tower named {name[:64]!r}: {exc}", field_name="name") from None
    hub: Hub = state.hub
    if name not in hub.book.towers:
        raise ApiError(404, f"no tower {name!r} has been heard from", field_name="name")
    body = await json_body(request, "the request")
    if not isinstance(body, dict) or not isinstance(body.get("roll"), dict):
        raise ApiError(
            422, 'send {"roll": {...}} with the roll as POST /api/rolls takes it', field_name="roll"
        )
    client = request.client.host if request.client else "unknown"
    wait = state.limiter.allow(client)
    if wait:
        raise ApiError(429, f"too many requests from {client}; wait {wait:.1f} s")
    token = body.get("token")
    request_id = hub.request(name, body["roll"], token=token if isinstance(token, str) else None)
    return JSONResponse(
        {"request_id": request_id, "status": "sent", "url": f"/api/requests/{request_id}"}, 202
    )


async def post_trust(request: Request) -> Response:
    """Pin a new tower's key: the operator compared its fingerprint with the tower's own."""
    require_token(request, request.state.token)
    name = request.path_params["name"]
    body = await json_body(request, "the request")
    given = body.get("fingerprint") if isinstance(body, dict) else None
    if not isinstance(given, str) or not given:
        raise ApiError(
            422, 'send {"fingerprint": "..."} as the towers page shows it', field_name="fingerprint"
        )
    hub: Hub = request.state.hub
    try:
        tower = hub.trust(name, given[:64])
    except KeyError:
        raise ApiError(404, f"no new tower named {name[:64]!r} is waiting", field_name="name") from None
    except ValueError as exc:
        raise ApiError(409, str(exc), field_name="fingerprint") from None
    return JSONResponse({"tower": hub.tower_json(tower)})


async def get_request(request: Request) -> Response:
    found = request.state.hub.requests.get(request.path_params["request_id"])
    if found is None:
        raise ApiError(404, "no such request (or it is too old)")
    return JSONResponse(found)


async def ws_events(websocket: WebSocket) -> None:
    state = websocket.state
    bus: EventBus = state.bus
    await websocket.accept()
    sub = bus.subscribe()

    async def watch_close() -> None:
        with contextlib.suppress(Exception):
            while (await websocket.receive())["type"] != "websocket.disconnect":
                pass
        sub.end()

    watcher = asyncio.create_task(watch_close())
    try:
        rows = await run_in_threadpool(state.store.recent, state.config.snapshot_rolls)
        snapshot = {
            "type": "snapshot",
            "seq": bus.seq,
            "rolls": [_log_entry(r) for r in reversed(rows)],
            "towers": state.hub.towers_json(),
            "new_towers": state.hub.keys.new_json(),
        }
        await websocket.send_text(json.dumps(snapshot))
        sent = snapshot["seq"]
        while True:
            event = await sub.next()
            if event is None:
                if sub.overflowed:
                    await websocket.close(code=1013, reason="fell behind: reconnect")
                break
            if event.seq > sent:
                await websocket.send_text(event.text)
                sent = event.seq
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass
    finally:
        bus.unsubscribe(sub)
        watcher.cancel()


def create_hub_app(config: HubConfig) -> Starlette:
    """The hub over ``config``; its log, bus and broker connection open in the lifespan."""
    allowed = AllowedHosts(config.host, config.allowed_hosts)  # a bad name fails here

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        data_dir = Path(config.data_dir)
        store = await run_in_threadpool(lambda: HubStore(data_dir, cap_bytes=config.log_cap_bytes))
        try:
            token = None
            if config.token_required:
                token, _created = load_or_create_token(data_dir)
            hub_id = config.hub_id or secrets.token_hex(4)
            topics = Topics(config.prefix)
            replies = topics.hub_replies(hub_id)
            bus = EventBus(history=200, client_queue=config.client_queue, types=HUB_EVENTS)
            link = HubLink(config.connection, topics, hub_id, replies)
            keys = KeyRing(
                store,
                config.tower_keys,
                trust_first_use=config.trust_first_use,
                accept_unsigned=config.accept_unsigned,
            )
            hub = Hub(
                store,
                bus,
                topics,
                replies,
                link.publish,
                backfill=config.backfill,
                identity=config.identity,
                keys=keys,
            )
            link.start()

            async def sweep() -> None:
                while True:
                    await asyncio.sleep(SWEEP_S)
                    hub.sweep()

            tasks = [asyncio.create_task(link.run(hub.take)), asyncio.create_task(sweep())]
            try:
                yield {
                    "config": config,
                    "store": store,
                    "hub": hub,
                    "link": link,
                    "bus": bus,
                    "token": token,
                    "limiter": RateLimiter(2.0, 10),
                }
            finally:
                for task in tasks:
                    task.cancel()
                await run_in_threadpool(link.close)
        finally:
            store.close()

    static = StaticFiles(packages=[(__package__ or "dicetower.firmware.hub", "static")])
    return Starlette(
        routes=[
            Route("/", index),
            Route("/favicon.ico", favicon),
            Route("/overlay", overlay),
            Route("/towers", towers_page),
            Route("/api/towers", api_towers),
            Route("/api/log", api_log),
            Route("/api/problems", api_problems),
            Route("/api/towers/{name}/rolls", post_request, methods=["POST"]),
            Route("/api/towers/{name}/trust", post_trust, methods=["POST"]),
            Route("/api/requests/{request_id}", get_request),
            WebSocketRoute("/ws", ws_events),
            Mount("/static", app=static, name="static"),
        ],
        lifespan=lifespan,
        middleware=[
            Middleware(SecurityHeadersMiddleware),
            Middleware(HostCheckMiddleware, allowed=allowed),
            Middleware(BodyLimitMiddleware, max_bytes=16 * 1024),
        ],
        exception_handlers={ApiError: _api_error},
    )
