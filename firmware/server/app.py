"""The Starlette application: routes, the lifespan that opens the roll service and its outputs, error mapping.

``create_app(config)`` builds ``Starlette(routes=[...], lifespan=...)``. The lifespan opens, on
one ``AsyncExitStack`` that closes them in reverse however it ends: the roll log (checked first:
a log that does not verify is refused unless ``accept_broken_log``; then rolls left in flight by
a crash are failed and stray photos set aside), the dice supply, the outputs that are on
(``firmware/outputs``: the overlay's event stream, MQTT, ...), the roll service with its one
worker, and the tower's button when the supply has one (``rolls/button.py``). It yields them as
one typed :class:`ServerState` under the request state's ``server``: nothing lives in module
globals. Errors are mapped once (``errors.py``): every 4xx and 5xx is
``{"error": {"status", "field", "message"}}``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from ..events import EventBus
from ..mqtt.settings import MqttConfig
from ..outputs import OUTPUTS
from ..rolllog import LogReader, RollLog, StartCheck, check_log, open_served_log
from ..rolls.asking import AskDesk
from ..rolls.button import ButtonWayIn, PressPlan
from ..rolls.corrections import CorrectionDesk
from ..rolls.outputs import Output, OutputContext, Outputs
from ..rolls.rolling import DiceSupply, RandomSupply
from ..rolls.service import RollService
from ..rolls.views import roll_summary, roll_view
from ..web.cors import cors_middleware
from ..web.guards import ApiError, json_body, require_token
from ..web.host_names import AllowedHosts
from ..web.hosts import HostCheckMiddleware
from ..web.security import (
    BodyLimitMiddleware,
    RateLimiter,
    SecurityHeadersMiddleware,
    is_loopback,
    load_or_create_token,
)
from .clients import TrustedProxies, client_address
from .errors import EXCEPTION_HANDLERS, InternalErrorMiddleware
from .fairness import fairness_from_rows
from .fairness_page import fairness_html
from .openapi import openapi_schema
from .overlay_options import check_overlay_query
from .stream import Snapshots, ws_events
from .table import TABLE_CODE_FILE, TableCodes, TableSettings, hook_table, table_routes
from .teach import TeachSession, teach_routes
from .watchdog import SystemdWatch

if TYPE_CHECKING:
    from ..notify import Notifier

__all__ = ["MAX_ROLL_ID", "ApiError", "ServerConfig", "ServerState", "create_app", "server_state"]


@dataclass
class ServerConfig:
    """Everything ``dicetower serve`` decides before the app starts."""

    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 8080
    #: None: a token is required exactly when ``host`` is not loopback
    require_token: bool | None = None
    rate_per_second: float = 2.0
    rate_burst: int = 10
    max_body_bytes: int = 16 * 1024
    max_waiting: int = 100
    event_history: int = 2000
    #: the event ring's text, in bytes, at most (older events then need a snapshot)
    event_history_bytes: int = 16 * 2**20
    replay_last: int = 50
    #: events, and bytes of them, one /ws client may have waiting before it is closed (1013)
    client_queue: int = 1024
    client_queue_bytes: int = 2**20
    #: seconds one send to a /ws client may take before it is closed as too slow (1013)
    send_timeout_s: float = 10.0
    #: /ws clients at once; one more is refused (503)
    max_ws_clients: int = 500
    snapshot_rolls: int = 20
    #: the snapshot a /ws client gets on connect, in bytes of JSON at most (oldest rolls left out)
    snapshot_bytes: int = 256 * 1024
    #: seconds a snapshot is reused for clients that connect (the events after it come from the ring)
    snapshot_max_age_s: float = 1.0
    photo_cap_bytes: int | None = 512 * 2**20
    #: start on a roll log that does not verify (its problems are recorded in it); else refuse
    accept_broken_log: bool = False
    #: the check ``dicetower serve`` ran before starting; None: the lifespan runs it
    log_check: StartCheck | None = None
    fairness_bias: float = 0.1
    #: opens the dice supply in the lifespan (from a worker thread); the RNG by default
    supply_factory: Callable[[], DiceSupply] = field(default=RandomSupply)
    #: a teach folder to name on /teach (docs/teach.md); None: /teach says how to open one
    teach_dir: Path | None = None
    #: called once with the new token when one is created
    announce_token: Callable[[str, Path], None] | None = None
    #: publish rolls and status to an MQTT broker, take requests from it (``[mqtt]``; docs/towers.md)
    mqtt: MqttConfig | None = None
    #: reverse proxies (addresses or networks) whose X-Forwarded-For names the client (``clients.py``)
    trusted_proxies: tuple[str, ...] = ()
    #: browser origins answered with CORS headers (a Foundry world; ``cors.py``); none: CORS off
    cors_origins: tuple[str, ...] = ()
    #: names a request's Host may give besides loopback and this machine's names and addresses
    #: (``host_names.py``; ``*``: any): a page on another name is refused, 421
    allowed_hosts: tuple[str, ...] = ()
    #: what a press of the tower's button rolls (``[roll] default``, then queued expressions), and
    #: the presses the server makes itself once serving (``--autopress``; mock pins only)
    presses: PressPlan | None = None
    #: the outputs that may be on, in order (each decides with ``wanted``); ``firmware/outputs``' list
    outputs: tuple[type[Output], ...] = OUTPUTS
    #: tells systemd the service is ready, and pings its watchdog while rolls progress (``watchdog.py``)
    notifier: Notifier | None = None
    #: the table's settings (``table.py``); None: the tower's ``[roll]`` keys, else the defaults
    table: TableSettings | None = None

    @property
    def token_required(self) -> bool:
        return self.require_token if self.require_token is not None else not is_loopback(self.host)


@dataclass
class ServerState:
    """What the lifespan opened, handed to every route as ``request.state.server``."""

    config: ServerConfig
    service: RollService
    outputs: Outputs
    bus: EventBus
    snapshots: Snapshots
    proxies: TrustedProxies
    token: str | None = None
    teach: TeachSession | None = None
    button: ButtonWayIn | None = None
    #: the table's corrections to the last roll, and the codes that open the table (``table.py``)
    corrections: CorrectionDesk | None = None
    asks: AskDesk = field(default_factory=AskDesk)
    table_codes: TableCodes = field(default_factory=TableCodes)
    #: each die's live accuracy for ``/api/tower``, with the event seq it was counted at: the
    #: log is walked again only after a roll or a correction, not on every status poll
    accuracy: tuple[int, list[dict[str, Any]]] | None = None

    @property
    def log(self) -> RollLog:
        return self.service.log


def server_state(request: Request | WebSocket) -> ServerState:
    """The server's typed state (the lifespan yields it under ``server``)."""
    state: ServerState = request.state.server
    return state


# -- helpers ----------------------------------------------------------------------------


def _client(request: Request) -> str:
    """The client to rate-limit and log: the peer, or whom a trusted proxy names (``clients.py``)."""
    peer = request.client.host if request.client else None
    return client_address(peer, request.headers.getlist("x-forwarded-for"), server_state(request).proxies)


#: the largest roll id (SQLite's INTEGER is 64-bit signed); a larger one in a URL is no roll
MAX_ROLL_ID = 2**63 - 1
#: the largest throw index or die slot in a photo URL (a roll has at most 1000 dice)
_MAX_PHOTO_INDEX = 1_000_000


def _roll_id(request: Request) -> int:
    """The URL's roll id; one beyond 64 bits cannot be in the log, so it is a 404, not an overflow."""
    roll_id: int = request.path_params["roll_id"]
    if roll_id > MAX_ROLL_ID:
        raise ApiError(
            404, f"no roll {str(roll_id)[:24]}...: roll ids are at most {MAX_ROLL_ID}", field_name="roll_id"
        )
    return roll_id


def _int_query(request: Request, name: str, default: int | None, lo: int, hi: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be a whole number, got {raw[:20]!r}", field_name=name) from None
    if not lo <= value <= hi:
        raise ApiError(400, f"{name} must be between {lo} and {hi}", field_name=name)
    return value


# -- endpoints --------------------------------------------------------------------------


async def post_roll(request: Request) -> Response:
    state = server_state(request)
    require_token(request, state.token)
    body = await json_body(request, "the roll")
    accepted = await state.service.accept(body, _client(request), via="http")
    url = f"/api/rolls/{accepted.id}"
    return JSONResponse({**accepted.to_json(), "url": url}, status_code=202, headers={"Location": url})


async def list_rolls(request: Request) -> Response:
    state = server_state(request)
    limit = _int_query(request, "limit", 50, 1, 200)
    before = _int_query(request, "before", None, 1, 2**62)
    roller = request.query_params.get("roller") or None
    system = request.query_params.get("system") or None
    rows = await run_in_threadpool(state.log.list, limit=limit, before=before, roller=roller, system=system)
    items = [roll_summary(roll_view(r)) for r in rows]
    nxt = f"/api/rolls?before={items[-1]['id']}&limit={limit}" if len(items) == limit else None
    return JSONResponse({"rolls": items, "next": nxt})


async def get_roll(request: Request) -> Response:
    state = server_state(request)
    roll_id = _roll_id(request)
    row = await run_in_threadpool(state.log.get, roll_id)
    if row is None:
        raise ApiError(404, f"no roll {roll_id}", field_name="roll_id")
    view = roll_view(row)
    if view["status"] in ("queued", "rolling"):
        view["place"] = state.service.queue.place(roll_id)
    return JSONResponse(view)


async def _photo(request: Request, kind: str, number_name: str) -> Response:
    state = server_state(request)
    roll_id = _roll_id(request)
    number = request.path_params[number_name]
    if number > _MAX_PHOTO_INDEX:
        raise ApiError(404, f"roll {roll_id} has no {kind} {str(number)[:24]}", field_name=number_name)
    name = f"{'throw' if kind == 'photo' else 'die'}-{number}.jpg"
    path = await run_in_threadpool(state.log.photo_path, roll_id, name)
    if path is None:
        raise ApiError(404, f"roll {roll_id} has no photo {name} (or it was pruned)")
    return FileResponse(path, media_type="image/jpeg", headers={"Cache-Control": "public, max-age=86400"})


async def get_photo(request: Request) -> Response:
    return await _photo(request, "photo", "index")


async def get_crop(request: Request) -> Response:
    return await _photo(request, "crop", "slot")


def _fairness(log: LogReader, bias: float) -> list[Any]:
    return fairness_from_rows(log.iter_rows(), bias)


async def get_fairness(request: Request) -> Response:
    state = server_state(request)
    stats = await run_in_threadpool(_fairness, state.log, state.config.fairness_bias)
    return JSONResponse({"dice": [s.to_json() for s in stats]})


async def fairness_page(request: Request) -> Response:
    state = server_state(request)
    stats = await run_in_threadpool(_fairness, state.log, state.config.fairness_bias)
    return HTMLResponse(fairness_html(stats))


def _accuracy(state: ServerState) -> list[dict[str, Any]]:
    """Per die: faces read by the tower, typed by the table, corrected (the ``reading`` block of
    ``/api/fairness``), counted again only when the event seq has moved since the last count."""
    seq = state.bus.seq
    if state.accuracy is None or state.accuracy[0] != seq:
        stats = _fairness(state.log, state.config.fairness_bias)
        state.accuracy = (seq, [{"die": s.die, "kind": s.kind, **s.reading_json()} for s in stats])
    return state.accuracy[1]


async def get_tower(request: Request) -> Response:
    state = server_state(request)
    supply_status = await run_in_threadpool(state.service.supply.status)
    accuracy = await run_in_threadpool(_accuracy, state)
    mqtt = state.outputs["mqtt"].status()["link"] if "mqtt" in state.outputs else None
    return JSONResponse(
        {
            "roller": supply_status,  # the API names the dice supply's status "roller" (docs/server.md)
            **state.service.status(),
            "button": state.button.status() if state.button is not None else None,
            "token_required": state.token is not None,
            "events": {
                "epoch": state.bus.epoch,
                "seq": state.bus.seq,
                "clients": state.bus.clients,
                "dropped": state.bus.dropped,
            },
            "mqtt": mqtt,
            "outputs": state.outputs.status(),
            "table": {
                "corrections": state.corrections.made if state.corrections else 0,
                "asks": state.asks.status(),
                "accuracy": accuracy,
            },
        }
    )


async def get_openapi(request: Request) -> Response:
    return JSONResponse(openapi_schema())


async def index(request: Request) -> Response:
    return RedirectResponse("/overlay", status_code=307)


async def favicon(request: Request) -> Response:
    return Response(status_code=204)  # browsers and OBS ask for one; an empty answer, not a 404


def _static_file(name: str) -> Path:
    return Path(str(resources.files(__package__) / "static" / name))


async def overlay(request: Request) -> Response:
    check_overlay_query(request.query_params)  # an unknown theme or field is a 400 naming the allowed
    return FileResponse(_static_file("overlay.html"), media_type="text/html")


# -- the app ----------------------------------------------------------------------------


def create_app(config: ServerConfig) -> Starlette:
    """The server over ``config``; the roll log, dice supply and worker open in its lifespan."""
    proxies = TrustedProxies(config.trusted_proxies)  # a bad entry fails here, before anything opens
    allowed = AllowedHosts(config.host, config.allowed_hosts)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[Mapping[str, ServerState]]:
        async with contextlib.AsyncExitStack() as stack:
            state = await _open(config, proxies, stack)
            yield {"server": state}

    static = StaticFiles(packages=[(__package__ or "dicetower.firmware.server", "static")])
    routes = [
        Route("/", index),
        Route("/favicon.ico", favicon),
        Route("/overlay", overlay),
        Route("/fairness", fairness_page),
        Route("/openapi.json", get_openapi),
        Route("/api/rolls", post_roll, methods=["POST"]),
        Route("/api/rolls", list_rolls, methods=["GET"]),
        Route("/api/rolls/{roll_id:int}", get_roll),
        Route("/api/rolls/{roll_id:int}/photos/{index:int}.jpg", get_photo),
        Route("/api/rolls/{roll_id:int}/dice/{slot:int}.jpg", get_crop),
        Route("/api/fairness", get_fairness),
        Route("/api/tower", get_tower),
        *teach_routes(),
        *table_routes(),
        WebSocketRoute("/ws", ws_events),
        Mount("/static", app=static, name="static"),
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(SecurityHeadersMiddleware),
            Middleware(HostCheckMiddleware, allowed=allowed),
            *cors_middleware(config.cors_origins),  # outside the rest: refusals carry CORS headers too
            Middleware(InternalErrorMiddleware),
            Middleware(BodyLimitMiddleware, max_bytes=config.max_body_bytes),
        ],
        exception_handlers=dict(EXCEPTION_HANDLERS),
    )


async def _open(
    config: ServerConfig, proxies: TrustedProxies, stack: contextlib.AsyncExitStack
) -> ServerState:
    """Open everything the server serves on ``stack``, which closes it in reverse."""
    data_dir = Path(config.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    teach = None if config.teach_dir is None else await run_in_threadpool(TeachSession, config.teach_dir)
    check = config.log_check or await run_in_threadpool(
        check_log, data_dir, accept_broken=config.accept_broken_log
    )
    log = await run_in_threadpool(open_served_log, data_dir, check, photo_cap_bytes=config.photo_cap_bytes)
    stack.callback(log.close)
    token = players = None
    if config.token_required:
        token, created = load_or_create_token(data_dir)
        if created and config.announce_token:
            config.announce_token(token, data_dir)
        players, _ = load_or_create_token(data_dir, TABLE_CODE_FILE)
    supply = await run_in_threadpool(config.supply_factory)
    stack.push_async_callback(run_in_threadpool, supply.close)
    bus = EventBus(
        history=config.event_history,
        history_bytes=config.event_history_bytes,
        client_queue=config.client_queue,
        client_queue_bytes=config.client_queue_bytes,
    )
    outputs = Outputs([])
    service = RollService(
        log,
        supply,
        outputs,
        limiter=RateLimiter(config.rate_per_second, config.rate_burst),
        token=token,
        max_waiting=config.max_waiting,
    )
    context = OutputContext(
        service=service, bus=bus, data_dir=data_dir, max_body_bytes=config.max_body_bytes, mqtt=config.mqtt
    )
    outputs.add(*(cls(context) for cls in config.outputs if cls.wanted(context)))
    await stack.enter_async_context(outputs)
    table = TableSettings.for_supply(config.table, supply)
    # waiting on the table is progress: the watchdog does not take a long answer for a wedged tower
    asks = AskDesk(progress=lambda: setattr(service.queue, "last_progress", time.monotonic()))
    hook_table(table, supply, asks, lambda: service.queue.current)
    service.start()
    stack.push_async_callback(service.stop)  # stops before the outputs close: the last roll's events go out
    stack.callback(asks.close)  # before the service stops: a roll waiting on the table ends at once
    button = None
    if config.presses is not None:
        button = ButtonWayIn.for_supply(service, supply, config.presses)
        await stack.enter_async_context(button)
    state = ServerState(
        config=config,
        service=service,
        outputs=outputs,
        bus=bus,
        snapshots=Snapshots(
            log,
            bus,
            rolls=config.snapshot_rolls,
            max_bytes=config.snapshot_bytes,
            max_age_s=config.snapshot_max_age_s,
        ),
        proxies=proxies,
        token=token,
        teach=teach,
        button=button,
        corrections=CorrectionDesk(
            log, outputs.publish, limiter=service.limiter, window_s=table.correct_window_s
        ),
        asks=asks,
        table_codes=TableCodes(token, players),
    )
    if config.notifier is not None:
        await stack.enter_async_context(SystemdWatch(config.notifier, service))
    return state
