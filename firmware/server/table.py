"""The table's HTTP side: its code, the ``/table`` page for phones, corrections and answers.

The page polls ``GET /api/table`` (the roll in progress, the recent rolls with each die's crop,
face and outcome, the dice put to the table) about once a second; a poll is also how the tower
knows a table page is there to ask (:class:`~..rolls.asking.AskDesk`).

Who may act from the table: whoever holds the server's token, or the players' code
(``DATA/table-code``, made beside the token when the server needs one). The players' code allows
only the table's acts (a correction, an answer to a die the tower could not read), never a roll:
a phone left on the table cannot drive the solenoid. On loopback without ``--require-token``
neither is asked for, as with rolling.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from ..rolls.amending import die_faces
from ..rolls.asking import AskDesk
from ..rolls.corrections import DEFAULT_WINDOW_S, CorrectionDesk, parse_correction
from ..rolls.rolling import DiceSupply
from ..rolls.views import event_view, roll_view
from ..table_reading import TableAsker
from ..web.guards import ApiError, json_body
from .clients import client_address

__all__ = [
    "TABLE_CODE_FILE",
    "TableCodes",
    "TableSettings",
    "check_table_code",
    "hook_table",
    "table_routes",
]

#: the players' code's file in the data directory (mode 0600)
TABLE_CODE_FILE = "table-code"
#: SQLite's largest id: a larger one in a URL is no roll
_MAX_ROLL_ID = 2**63 - 1


@dataclass(frozen=True)
class TableSettings:
    """``[roll]``'s table keys: how long a roll may be corrected, and what becomes of a die the
    tower cannot read (``rethrow``, or ``ask`` the table for up to ``ask_timeout_s``)."""

    correct_window_s: float = DEFAULT_WINDOW_S
    unreadable: str = "rethrow"
    ask_timeout_s: float = 60.0

    @classmethod
    def for_supply(cls, given: TableSettings | None, supply: DiceSupply) -> TableSettings:
        """``given`` (a test's, an embedder's), else the tower's ``[roll]`` keys, else the defaults."""
        if given is not None:
            return given
        tower = getattr(supply, "tower", None)
        if tower is None:
            return cls()
        roll = tower.config.roll
        return cls(roll.correct_window_s, roll.unreadable, roll.ask_timeout_s)


def hook_table(settings: TableSettings, supply: DiceSupply, asks: AskDesk, current_roll: Any) -> bool:
    """With ``unreadable = "ask"`` and a tower, let the tower ask the table (``table_reading.py``)."""
    tower = getattr(supply, "tower", None)
    if settings.unreadable != "ask" or tower is None:
        return False
    tower.ask_table = TableAsker(asks, current_roll, settings.ask_timeout_s)
    return True


@dataclass(frozen=True)
class TableCodes:
    """The codes that open the table: the server's token and the players' code (None: no code needed)."""

    token: str | None = None
    players: str | None = None

    @property
    def required(self) -> bool:
        return self.token is not None


def check_table_code(given: str | None, codes: TableCodes) -> None:
    """Refuse (401) unless ``given`` is the server's token or the players' code, when one is needed."""
    if not codes.required:
        return
    if not given:
        raise ApiError(
            401, "the table needs its code: Authorization: Bearer CODE", field_name="authorization"
        )
    for code in (codes.token, codes.players):
        if code and hmac.compare_digest(given.encode(), code.encode()):
            return
    raise ApiError(401, "that is not this table's code", field_name="authorization")


def _bearer(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def _desk(request: Request) -> tuple[CorrectionDesk, TableCodes]:
    state = request.state.server
    desk: CorrectionDesk = state.corrections
    codes: TableCodes = state.table_codes
    return desk, codes


def _client(request: Request) -> str:
    """The client to rate-limit and record, as the roll endpoints name it (``clients.py``)."""
    peer = request.client.host if request.client else None
    return client_address(peer, request.headers.getlist("x-forwarded-for"), request.state.server.proxies)


async def post_correction(request: Request) -> Response:
    desk, codes = _desk(request)
    check_table_code(_bearer(request), codes)
    roll_id: int = request.path_params["roll_id"]
    if roll_id > _MAX_ROLL_ID:
        raise ApiError(404, f"no roll {str(roll_id)[:24]}...", field_name="roll_id")
    body = await json_body(request, "the correction")
    view = await desk.correct(roll_id, body, _client(request))
    url = f"/api/rolls/{roll_id}"
    return JSONResponse(view, status_code=201, headers={"Location": url})


#: finished rolls the table page shows
TABLE_ROLLS = 8


def _table_roll(view: dict[str, Any], correctable: bool) -> dict[str, Any]:
    """A roll as the table page shows it: who, what, each die (crop, face, the faces it has), the outcome."""
    bounded = event_view(view)
    keys = ("id", "status", "roller", "label", "text", "total", "outcome", "degree", "critical", "botch")
    out: dict[str, Any] = {k: bounded.get(k) for k in keys}
    out.update(
        error=bounded.get("error"),
        finished_at=bounded.get("finished_at"),
        corrected=bounded.get("corrected", False),
        as_read=bounded.get("as_read"),
        correctable=correctable,
        dice_count=bounded.get("dice_count", len(bounded.get("dice") or [])),
        dice=[
            {
                "slot": d.get("slot"),
                "kind": d.get("kind"),
                "face": d.get("face"),
                "die": d.get("die"),
                "role": d.get("role"),
                "flags": d.get("flags") or [],
                "crop_url": d.get("crop_url"),
                "corrected": d.get("corrected"),
                "by_table": d.get("by_table"),
                "faces": die_faces(str(d.get("kind"))) if correctable else None,
            }
            for d in bounded.get("dice") or []
        ],
    )
    return out


def _table_state(state: Any) -> dict[str, Any]:
    """What the table page polls for (from a worker thread): the roll in progress, the queue,
    the recent rolls (the last one correctable within its window) and the open questions."""
    desk: CorrectionDesk = state.corrections
    service = state.service
    rows = service.log.list(limit=TABLE_ROLLS)
    now = time.time()
    rolls = []
    for i, row in enumerate(rows):
        fresh = row["status"] == "done" and now - float(row["finished_at"]) <= desk.window_s
        rolls.append(_table_roll(roll_view(row), correctable=i == 0 and fresh))
    status = service.status()
    rolling = None
    if status["rolling"] is not None:
        pending = service.log.get(status["rolling"])
        if pending is not None:
            rolling = {k: pending.get(k) for k in ("id", "roller")} | {
                "label": (pending.get("request") or {}).get("notation") or pending.get("system")
            }
    asks: AskDesk = state.asks
    return {
        "rolling": rolling,
        "queue": status["queue"][:10],
        "rolls": rolls,
        "window_s": desk.window_s,
        "asks": [q.to_json() for q in asks.open_questions()],
    }


async def get_table(request: Request) -> Response:
    state = request.state.server
    check_table_code(_bearer(request), state.table_codes)
    state.asks.seen()
    return JSONResponse(await run_in_threadpool(_table_state, state))


async def post_answer(request: Request) -> Response:
    """The table's answer for a die the tower could not read: the first valid one fills the slot."""
    state = request.state.server
    check_table_code(_bearer(request), state.table_codes)
    roll_id: int = request.path_params["roll_id"]
    correction = parse_correction(await json_body(request, "the answer"))  # the same fields as a correction
    client = _client(request)
    wait = state.corrections.limiter.allow(client)
    if wait:
        raise ApiError(
            429, f"too many requests from {client}; wait {wait:.1f} s", retry_after=max(1, round(wait))
        )
    q = state.asks.answer(roll_id, correction.die, correction.face, correction.by)
    return JSONResponse({"roll": roll_id, "die": q.slot, "face": q.face, "by": q.by}, status_code=201)


async def get_ask_crop(request: Request) -> Response:
    """The crop of a die the table is asked about (open while the question is)."""
    state = request.state.server
    q = state.asks.question(request.path_params["qid"])
    if q is None or not q.crop:
        raise ApiError(404, "no such question (answered, or too late)")
    return Response(q.crop, media_type="image/jpeg", headers={"Cache-Control": "no-store"})


def _page(name: str) -> Path:
    return Path(str(resources.files(__package__) / "static" / name))


async def table_page(request: Request) -> Response:
    return FileResponse(_page("table.html"), media_type="text/html")


def table_routes() -> list[Route]:
    """The page and the corrections endpoint."""
    return [
        Route("/table", table_page),
        Route("/api/table", get_table),
        Route("/api/table/asks/{qid:int}.jpg", get_ask_crop),
        Route("/api/rolls/{roll_id:int}/corrections", post_correction, methods=["POST"]),
        Route("/api/rolls/{roll_id:int}/answers", post_answer, methods=["POST"]),
    ]
